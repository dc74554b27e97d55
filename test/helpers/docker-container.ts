import type Docker from 'dockerode';
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
    started.server?.close();
    await started.container.remove({ force: true }).catch(() => undefined);
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
