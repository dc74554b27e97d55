import { z } from 'zod';
import { defineBackend, type GcOutcome, type GcRequest } from '../registry.js';

/** Host sandboxes (local and bwrap) whose harness died: every run also does this at its start. */
export async function gcHost(request: GcRequest, backend: string): Promise<GcOutcome> {
  const { gcHostSandboxes } = await import('./gc.js');
  const removed = await gcHostSandboxes(undefined, {
    allHosts: request.allHosts,
    dryRun: request.dryRun,
    ...(request.runIds.length ? { runIds: request.runIds } : {}),
  });
  const verb = request.dryRun ? 'would remove' : 'removed';
  return {
    lines: removed.map((r) => `${verb} ${r}`),
    summary: `${verb} ${removed.length} host sandbox folder(s)`,
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
