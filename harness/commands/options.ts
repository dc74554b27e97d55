import os from 'node:os';
import { z } from 'zod';
import { intFromCli } from '../config/values.js';
import { RedgreenError } from '../errors.js';
import { BACKENDS, backendOptionsShape } from '../sandbox/backends.js';

export const BACKEND_CHOICES = [...BACKENDS.map((b) => b.name), 'auto'] as const;

export const PathOptionsSchema = z.object({
  root: z.string().optional(),
  fixtures: z.string().optional(),
  oracles: z.string().optional(),
  reports: z.string().optional(),
  transcripts: z.string().optional(),
});

/** Options of selfcheck, run and replay --verify; each backend adds its own (--pool, --template …) from its descriptor. */
export const RunOptionsSchema = PathOptionsSchema.extend({
  /** Unset means local, or, when resuming, what the run recorded. */
  backend: z.enum(BACKEND_CHOICES).optional(),
  concurrency: intFromCli(1, 1024).default(Math.max(1, os.availableParallelism())),
  /** Unset means 1, or, when resuming, what the run recorded. */
  repeat: intFromCli(1, 100).optional(),
  json: z.boolean().default(false),
  passEnv: z.array(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'variable names only')).default([]),
  resume: z.string().min(1).optional(),
  /** Reuse cached setup results (node_modules …) keyed by the lockfiles. */
  cache: z.boolean().default(true),
  force: z.boolean().default(false),
}).extend(backendOptionsShape());
export type RunOptions = z.infer<typeof RunOptionsSchema>;

export const SelfcheckOptionsSchema = RunOptionsSchema.extend({ write: z.boolean().default(false) });
export type SelfcheckOptions = z.infer<typeof SelfcheckOptionsSchema>;

/** Validates parsed CLI options; a bad value is a usage error naming the option. */
export function parseOptions<S extends z.ZodType>(schema: S, raw: unknown): z.infer<S> {
  const r = schema.safeParse(raw);
  if (r.success) return r.data;
  // In the user's words: the flag and the value they typed, never a schema path like `--format.0`.
  const given = (raw ?? {}) as Record<string, unknown>;
  const lines = r.error.issues.map((i) => {
    const key = String(i.path[0] ?? '');
    const flag = `--${key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;
    const value = given[key];
    const scalar = typeof value === 'string' || typeof value === 'number';
    const shown = scalar && !i.message.includes(String(value)) ? ` ${JSON.stringify(String(value))}` : '';
    return `${flag}${shown}: ${i.message}`;
  });
  throw new RedgreenError('USAGE', `invalid option${lines.length > 1 ? 's' : ''}:\n  ${lines.join('\n  ')}`);
}
