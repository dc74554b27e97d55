import type Docker from 'dockerode';
import { z } from 'zod';
import { intFromCli } from '../../config/values.js';
import { defineBackend, gcOptionsOf, probeBy, type BackendFlag, type GcOutcome, type GcRequest, type Probe } from '../registry.js';

/** Shared with any backend that speaks the Docker Engine API (the same flag, the same meaning). */
export const POOL_FLAG: BackendFlag = {
  flags: '--pool <n>',
  key: 'pool',
  description: 'docker, podman: containers kept started and ready',
  default: '0',
};
export const engineOptions = z.object({ pool: intFromCli(0, 256).default(0) });

/**
 * `redgreen gc` on an engine: what dead runs left (containers, volumes, build-stage images), and
 * on this host the folders of their links to the engine (a kill -9 skips the hook that removes them).
 */
export async function gcEngine(request: GcRequest, engine: string, client: () => Promise<Docker>): Promise<GcOutcome> {
  const [{ profileOf, pingEngine }, { collectGarbage }, { gcLinkFolders }] = await Promise.all([
    import('./client.js'),
    import('./gc.js'),
    import('../core/gc.js'),
  ]);
  const docker = await client();
  await pingEngine(docker);
  const o = gcOptionsOf(request);
  const r = await collectGarbage(docker, o);
  const linkFolders = await gcLinkFolders(undefined, o);
  const verb = request.dryRun ? 'would remove' : 'removed';
  const line = (i: (typeof r.removed)[number]) => `${i.kind} ${i.name} (run ${i.run}, owner ${i.owner})`;
  const alive = r.kept.filter((k) => k.reason === 'alive').length;
  const foreign = r.kept.filter((k) => k.reason === 'other-host').length;
  return {
    lines: [
      ...r.removed.map((i) => `${verb} ${line(i)}`),
      ...linkFolders.map((f) => `${verb} link folder ${f}`),
      ...r.failed.map((i) => `failed to remove ${line(i)}: ${i.error}`),
    ],
    summary: `${verb} ${r.removed.length} object(s)${linkFolders.length ? ` and ${linkFolders.length} link folder(s)` : ''}; kept ${alive} of live runs${foreign ? `, ${foreign} of other hosts (--all-hosts removes those)` : ''}${r.failed.length ? `; ${r.failed.length} failed` : ''}`,
    failed: r.failed.length,
    json: { backend: engine, engine: profileOf(docker).address, dryRun: request.dryRun, ...r, linkFolders },
  };
}

/** An engine's probe: reachable, and the default image present; doctor shows both when they are. */
export async function engineProbe(check: () => Promise<unknown>, fix: string): Promise<Probe> {
  const probe = await probeBy(check, fix);
  const { DEFAULT_IMAGE } = await import('./image.js');
  return probe.ok ? { ok: true, detail: `engine reachable, image ${DEFAULT_IMAGE} present` } : probe;
}

export const dockerBackend = defineBackend({
  name: 'docker',
  summary: 'a container per sandbox through the Docker Engine API (DOCKER_HOST): no network, no capabilities, read-only root, limits',
  isolating: true,
  remote: false,
  autoRank: 2,
  options: engineOptions,
  flags: [POOL_FLAG],
  async create(options, ctx) {
    const { DockerBackend } = await import('./backend.js');
    return new DockerBackend({ passEnv: ctx.passEnv, pool: options.pool });
  },
  async probe() {
    const { DockerBackend } = await import('./backend.js');
    return engineProbe(
      () => new DockerBackend().probe(),
      'start a Docker engine (apt-get install -y docker.io; dockerd) and point DOCKER_HOST at it, then `redgreen image build`',
    );
  },
  gc: (request) => gcEngine(request, 'docker', dockerClient),
  buildImage: async (request) => (await import('./image-build.js')).buildRuntimeImage({ ...request, docker: await dockerClient() }),
});

async function dockerClient(): Promise<Docker> {
  return (await import('./client.js')).dockerClient();
}
