import { engineOptions, engineProbe, gcEngine, POOL_FLAG } from '../docker/descriptor.js';
import { defineBackend } from '../registry.js';

/**
 * Podman through its Docker-compatible API: the Docker backend's code (a container per sandbox,
 * no network, no capabilities, read-only root, limits) on another engine.
 */
async function podman(options: { pool?: number; passEnv?: readonly string[] } = {}) {
  const [{ DockerBackend }, { podmanClient }] = await Promise.all([import('../docker/backend.js'), import('./client.js')]);
  return new DockerBackend({ ...options, docker: podmanClient(), name: 'podman' });
}

export const podmanBackend = defineBackend({
  name: 'podman',
  summary: "a container per sandbox through Podman's Docker-compatible API (CONTAINER_HOST, default the rootful socket)",
  isolating: true,
  remote: false,
  autoRank: 1.5,
  options: engineOptions,
  flags: [POOL_FLAG],
  create: (options, ctx) => podman({ pool: options.pool, passEnv: ctx.passEnv }),
  probe: async () =>
    engineProbe(async () => (await podman()).probe(), 'start the Podman service, then `redgreen image build --backend podman`'),
  gc: (request) => gcEngine(request, 'podman', async () => (await import('./client.js')).podmanClient()),
  buildImage: async (request) => {
    const [{ buildRuntimeImage }, { podmanClient }] = await Promise.all([import('../docker/image-build.js'), import('./client.js')]);
    return buildRuntimeImage({ ...request, docker: podmanClient() });
  },
});
