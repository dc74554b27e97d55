import { z } from 'zod';
import { defineBackend, gcOptionsOf, type GcOutcome, type GcRequest } from '../registry.js';

/**
 * Host folders whose harness died, sandboxes (local and bwrap) and Docker links alike: every run
 * also does this at its start.
 */
export async function gcHost(request: GcRequest, backend: string): Promise<GcOutcome> {
  const { gcHostFolders } = await import('./gc.js');
  const removed = await gcHostFolders(undefined, gcOptionsOf(request));
  const verb = request.dryRun ? 'would remove' : 'removed';
  return {
    lines: removed.map((r) => `${verb} ${r}`),
    summary: `${verb} ${removed.length} host folder(s) of runs that are gone (sandboxes, Docker links)`,
    failed: 0,
    json: { backend, dryRun: request.dryRun, removed },
  };
}

export const localBackend = defineBackend({
  name: 'local',
  summary: 'a private temp folder and plain processes: fast, isolates nothing but the environment (trusted fixtures)',
  isolating: false,
  remote: false,
  autoRank: 0,
  options: z.object({}),
  flags: [],
  async create(_options, ctx) {
    const { LocalBackend } = await import('./local.js');
    return new LocalBackend({ passEnv: ctx.passEnv, cacheDir: ctx.cacheDir });
  },
  probe: async () => ({ ok: true }),
  gc: (request) => gcHost(request, 'local'),
});
