import { z } from 'zod';
import { intFromCli } from '../../config/values.js';
import { defineBackend, gcOptionsOf, type GcOutcome, type GcRequest } from '../registry.js';

const options = z.object({
  /** The template (default $E2B_TEMPLATE) and the envd user (CubeSandbox needs root, default $E2B_USER). */
  template: z.string().min(1).optional(),
  e2bUser: z
    .string()
    .regex(/^[a-z_][a-z0-9_-]*$/, 'a user name')
    .optional(),
  warm: intFromCli(0, 256).default(0),
  createRate: intFromCli(1, 1000).default(10),
});

async function gcRemote(request: GcRequest): Promise<GcOutcome> {
  const [{ e2bConnection }, { gcSandboxes }] = await Promise.all([import('./backend.js'), import('./gc.js')]);
  const r = await gcSandboxes({
    connection: e2bConnection({}),
    ...gcOptionsOf(request),
  });
  const verb = request.dryRun ? 'would kill' : 'killed';
  return {
    lines: [
      ...r.killed.map((id) => `${verb} sandbox ${id}`),
      ...r.kept.map((k) => `kept sandbox ${k.id} (run ${k.run}): ${k.why}`),
      ...r.failed.map((f) => `failed to kill sandbox ${f.id}: ${f.error}`),
    ],
    summary: `${verb} ${r.killed.length} of ${r.listed} redgreen sandbox(es)${r.failed.length ? `; ${r.failed.length} failed` : ''}`,
    failed: r.failed.length,
    json: { backend: 'e2b', dryRun: request.dryRun, ...r },
  };
}

export const e2bBackend = defineBackend({
  name: 'e2b',
  summary: 'remote sandboxes on E2B or an E2B-compatible service (self-hosted E2B, CubeSandbox), speaking its wire protocols',
  isolating: true,
  remote: true,
  options,
  flags: [
    { flags: '--template <name>', key: 'template', description: 'e2b: template name or id (default: $E2B_TEMPLATE)' },
    { flags: '--e2b-user <name>', key: 'e2bUser', description: 'e2b: envd user; CubeSandbox needs root (default: $E2B_USER)' },
    { flags: '--warm <n>', key: 'warm', description: 'e2b: sandboxes kept created ahead of demand', default: '0' },
    { flags: '--create-rate <n>', key: 'createRate', description: 'e2b: sandbox creations per second at most', default: '10' },
  ],
  async create(o, ctx) {
    const { E2BBackend } = await import('./backend.js');
    return new E2BBackend({
      template: o.template ?? process.env.E2B_TEMPLATE,
      user: o.e2bUser ?? process.env.E2B_USER,
      passEnv: ctx.passEnv,
      warm: o.warm,
      limits: { ratePerSec: o.createRate, burst: o.createRate },
    });
  },
  async probe() {
    if (!process.env.E2B_API_KEY)
      return {
        ok: false,
        reason: 'E2B_API_KEY is not set',
        fix: 'set E2B_API_KEY (any non-empty value for a CubeSandbox without keys) and, for a self-hosted service, E2B_API_URL',
      };
    return (await import('./check.js')).checkService();
  },
  gc: gcRemote,
});
