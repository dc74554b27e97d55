import { z } from 'zod';
import { RedgreenError } from '../../errors.js';
import { defineBackend, type GcOutcome, type GcRequest } from '../registry.js';

/** Host sandboxes (local and bwrap) whose harness died: every run also does this at its start. */
export async function gcHost(request: GcRequest): Promise<GcOutcome> {
  if (request.dryRun) throw new RedgreenError('USAGE', '--dry-run is not supported for host sandboxes (local, bwrap)');
  const { gcHostSandboxes } = await import('./gc.js');
  const removed = await gcHostSandboxes();
  return {
    lines: removed.map((r) => `removed ${r}`),
    summary: `removed ${removed.length} host sandbox folder(s)`,
    failed: 0,
    json: { backend: 'local', removed },
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
  gc: gcHost,
});
