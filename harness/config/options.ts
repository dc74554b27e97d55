import os from 'node:os';
import { z } from 'zod';
import { RedgreenError } from '../errors.js';

const intFromCli = (min: number, max: number) =>
  z.union([z.number(), z.string()]).transform((v, ctx) => {
    const n = typeof v === 'number' ? v : Number(v);
    if (!Number.isInteger(n) || n < min || n > max) {
      ctx.addIssue({ code: 'custom', message: `must be a whole number from ${min} to ${max}, got ${JSON.stringify(v)}` });
      return z.NEVER;
    }
    return n;
  });

export const BACKENDS = ['local', 'bwrap', 'docker', 'e2b', 'auto'] as const;

export const PathOptionsSchema = z.object({
  root: z.string().optional(),
  fixtures: z.string().optional(),
  oracles: z.string().optional(),
  reports: z.string().optional(),
  transcripts: z.string().optional(),
});

export const RunOptionsSchema = PathOptionsSchema.extend({
  backend: z.enum(BACKENDS).default('local'),
  concurrency: intFromCli(1, 1024).default(Math.max(1, os.availableParallelism())),
  repeat: intFromCli(1, 100).default(1),
  json: z.boolean().default(false),
  passEnv: z.array(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'variable names only')).default([]),
  resume: z.string().min(1).optional(),
  /** e2b: the template (default $E2B_TEMPLATE), the envd user (CubeSandbox needs root), warm sandboxes, creations per second. */
  template: z.string().min(1).optional(),
  e2bUser: z.string().regex(/^[a-z_][a-z0-9_-]*$/, 'a user name').optional(),
  warm: intFromCli(0, 256).default(0),
  /** docker: containers of the default image kept started and ready. */
  pool: intFromCli(0, 256).default(0),
  createRate: intFromCli(1, 1000).default(10),
  /** Reuse cached setup results (node_modules …) keyed by the lockfiles. */
  cache: z.boolean().default(true),
  force: z.boolean().default(false),
});
export type RunOptions = z.infer<typeof RunOptionsSchema>;

export const SelfcheckOptionsSchema = RunOptionsSchema.extend({ write: z.boolean().default(false) });
export type SelfcheckOptions = z.infer<typeof SelfcheckOptionsSchema>;

/** Validates parsed CLI options; a bad value is a usage error naming the option. */
export function parseOptions<S extends z.ZodType>(schema: S, raw: unknown): z.infer<S> {
  const r = schema.safeParse(raw);
  if (r.success) return r.data;
  const lines = r.error.issues.map((i) => `--${i.path.map((p) => String(p).replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)).join('.')}: ${i.message}`);
  throw new RedgreenError('USAGE', `invalid option${lines.length > 1 ? 's' : ''}:\n  ${lines.join('\n  ')}`);
}
