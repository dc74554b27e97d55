import type Docker from 'dockerode';
import { statusOf } from '../../harness/sandbox/docker/client.js';
import { volumeNames } from '../../harness/sandbox/docker/config.js';
import { startSandboxContainer, type SandboxPlan, type StartedContainer } from '../../harness/sandbox/docker/container.js';
import type { ServerLink } from '../../harness/sandbox/docker/link.js';

export type { StartedContainer };

/** Starts a sandbox container (startSandboxContainer) named after its volumes, gives it to `use`, then removes it and its volumes. */
export async function withSandboxContainer<T>(
  docker: Docker,
  plan: SandboxPlan,
  use: (started: StartedContainer) => Promise<T>,
  offer?: () => Promise<ServerLink>,
): Promise<T> {
  const started = await startSandboxContainer(docker, plan, plan.volume, offer);
  try {
    return await use(started);
  } finally {
    // Removed before its server's input is closed, as the backend's discard does: Podman does not
    // remove a container that is stopping on its own (its server read the end of its input).
    // One the test stopped itself may still be stopping: once it has, it must go (a leak fails the test).
    await started.container.remove({ force: true }).catch(async (e: unknown) => {
      if (statusOf(e) === 404) return;
      await started.container.wait().catch(() => undefined);
      await started.container.remove({ force: true }).catch((again: unknown) => {
        if (statusOf(again) !== 404) throw again;
      });
    });
    started.server?.close();
    await Promise.all(
      volumeNames(plan.volume).map((v) =>
        docker
          .getVolume(v)
          .remove()
          .catch(() => undefined),
      ),
    );
  }
}
