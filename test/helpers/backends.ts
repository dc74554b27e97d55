import os from 'node:os';
import path from 'node:path';
import { BACKENDS } from '../../harness/sandbox/backends.js';
import type { SandboxBackend } from '../../harness/sandbox/core/types.js';
import { DockerBackend } from '../../harness/sandbox/docker/backend.js';
import { E2BBackend } from '../../harness/sandbox/e2b/backend.js';
import { podmanClient } from '../../harness/sandbox/podman/client.js';
import type { BackendContext } from '../../harness/sandbox/registry.js';
import { dockerTestOptions } from './backends-docker.js';
import { e2bBackendOptions } from './backends-e2b.js';

/**
 * Every backend of the registry, for the suites that run on all of them (conformance, setup
 * cache): a new backend is tested as soon as it is registered. A backend whose probe fails here
 * is left out locally; in CI (CI=true) that is an error, never a silent skip.
 */
export interface BackendCase {
  name: string;
  make: () => Promise<SandboxBackend>;
  /** Isolating backends also promise no network and no host filesystem access. */
  isolating: boolean;
}

/** The context the backends' tests (and their probes) run with. */
export const TEST_BACKEND_CONTEXT: BackendContext = { passEnv: [], cacheDir: path.join(os.homedir(), '.cache', 'redgreen') };

/**
 * Backends whose tests need other options than a user's defaults: small limits so many
 * containers fit on a CI machine; the remote service's local TEST DOUBLE (test/helpers/e2b-server),
 * which runs commands as plain processes and so isolates nothing.
 */
const FOR_TESTS: Record<string, Omit<BackendCase, 'name'> & { label?: string }> = {
  docker: { make: async () => new DockerBackend(dockerTestOptions()), isolating: true },
  podman: { make: async () => new DockerBackend(dockerTestOptions({ docker: podmanClient(), name: 'podman' })), isolating: true },
  e2b: { label: 'e2b (test double)', make: async () => new E2BBackend(e2bBackendOptions()), isolating: false },
};

export async function backendCases(): Promise<BackendCase[]> {
  const cases: BackendCase[] = [];
  for (const d of BACKENDS) {
    const special = FOR_TESTS[d.name];
    if (!d.remote) {
      const probe = await d.probe(d.options.parse({}), TEST_BACKEND_CONTEXT);
      if (!probe.ok && process.env.CI)
        throw new Error(
          `CI must run the ${d.name} backend's tests, but it cannot run here: ${probe.reason} (${probe.fix}); install it in .ci/run`,
        );
      if (!probe.ok) continue;
    }
    if (special) cases.push({ name: special.label ?? d.name, make: special.make, isolating: special.isolating });
    else if (d.remote) throw new Error(`the remote backend ${d.name} needs a test double in test/helpers/backends.ts`);
    else cases.push({ name: d.name, make: () => d.create(d.options.parse({}), TEST_BACKEND_CONTEXT), isolating: d.isolating });
  }
  return cases;
}

/**
 * The Docker backend with its containers' command server kept the POSIX sh one (DockerBackend's
 * `server: 'sh'`): the runtime image has python3, so without this case the sh server, which every
 * image without python3 gets, would go untested. Present where the docker case is.
 */
export function shellServerCases(cases: BackendCase[]): BackendCase[] {
  if (!cases.some((c) => c.name === 'docker')) return [];
  return [{ name: 'docker (sh server)', make: async () => new DockerBackend(dockerTestOptions({ server: 'sh' })), isolating: true }];
}
