import os from 'node:os';
import { z } from 'zod';
import { intFromCli } from '../config/values.js';
import { RedgreenError } from '../errors.js';
import { backendOptionsShape, backendNames } from '../sandbox/backends.js';
import { ReporterSpecSchema } from './reporter-spec.js';

export const PathOptionsSchema = z.object({
  root: z.string().optional(),
  fixtures: z.string().optional(),
  oracles: z.string().optional(),
  reports: z.string().optional(),
  transcripts: z.string().optional(),
  /** A config file to use instead of the nearest redgreen.config.*; false: none (API). */
  config: z.union([z.string().min(1), z.literal(false)]).optional(),
});

/** `--shard i/n`: the i-th of n deterministic parts of the selection (1-based). */
export const ShardSchema = z.string().transform((s, ctx) => {
  const m = /^\s*(\d+)\s*\/\s*(\d+)\s*$/.exec(s);
  const index = Number(m?.[1]);
  const count = Number(m?.[2]);
  if (!m || count < 1 || index < 1 || index > count) {
    ctx.addIssue({ code: 'custom', message: `must be i/n with 1 ≤ i ≤ n (e.g. 1/4), got ${JSON.stringify(s)}` });
    return z.NEVER;
  }
  return { index, count };
});
export type Shard = z.output<typeof ShardSchema>;

/** Which fixtures: ids or globs (positional on the CLI, `ids` in the API), tags, a shard. */
export const SelectionShape = {
  ids: z.array(z.string().min(1)).default([]),
  tag: z.array(z.string().min(1)).default([]),
  shard: ShardSchema.optional(),
};

const backendName = z.string().refine((b) => b === 'auto' || backendNames().includes(b), {
  error: (i) => `unknown backend ${JSON.stringify(i.input)}: one of ${[...backendNames(), 'auto'].join(', ')}`,
});

/** Options of selfcheck, run and replay --verify, without the backends' own. */
export const RunBaseSchema = PathOptionsSchema.extend({
  ...SelectionShape,
  /** Unset means local, or, when resuming, what the run recorded. */
  backend: backendName.optional(),
  concurrency: intFromCli(1, 1024).default(Math.max(1, os.availableParallelism())),
  /** Unset means 1, or, when resuming, what the run recorded. */
  repeat: intFromCli(1, 100).optional(),
  json: z.boolean().default(false),
  passEnv: z.array(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'variable names only')).default([]),
  resume: z.string().min(1).optional(),
  /** Reuse cached setup results (node_modules …) keyed by the lockfiles. */
  cache: z.boolean().default(true),
  force: z.boolean().default(false),
  /** Stop after this many fixtures missed their expectation (the rest is unfinished, resumable). */
  bail: intFromCli(1, 1_000_000).optional(),
  /** What is printed and written: default, json, junit, md, html, github (a file format may name its file: junit=out.xml). */
  reporter: z.array(ReporterSpecSchema).optional(),
});

/**
 * Built when a command runs, not when this module loads: the backends' own options (--pool,
 * --template …) come from the registry, which user code may have added to (registerBackend).
 */
export function runOptionsSchema() {
  return RunBaseSchema.extend(backendOptionsShape());
}
export type RunOptions = z.infer<typeof RunBaseSchema>;

const SelfcheckShape = { write: z.boolean().default(false) };
export const SelfcheckBaseSchema = RunBaseSchema.extend(SelfcheckShape);
export function selfcheckOptionsSchema() {
  return runOptionsSchema().extend(SelfcheckShape);
}
export type SelfcheckOptions = z.infer<typeof SelfcheckBaseSchema>;

const AgentShape = {
  patches: z.string().min(1).optional(),
  agent: z.string().min(1).optional(),
  agentTimeout: z.coerce.number().positive().max(86_400).default(1800),
  agentNetwork: z.boolean().default(false),
  baseline: z.boolean().default(true),
  /** Reject (never apply) a patch the audit flags, instead of grading it and marking a pass suspicious. */
  strict: z.boolean().default(false),
};
export const AgentRunBaseSchema = RunBaseSchema.extend(AgentShape);
export const agentRunOptionsSchema = () => runOptionsSchema().extend(AgentShape);
export type AgentRunOptions = z.infer<typeof AgentRunBaseSchema>;

export type OptionStyle = 'cli' | 'api';

/** Where a value came from, for messages: a flag, an API option, or a key of the config file. */
export type OptionSources = Record<string, string>;

const flagOf = (key: string) => `--${key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;

function closest(word: string, candidates: readonly string[]): string | undefined {
  const dist = (a: string, b: string) => {
    const d = Array.from({ length: a.length + 1 }, (_, i) => [i, ...Array<number>(b.length).fill(0)]);
    for (let j = 1; j <= b.length; j++) d[0]![j] = j;
    for (let i = 1; i <= a.length; i++)
      for (let j = 1; j <= b.length; j++)
        d[i]![j] = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    return d[a.length]![b.length]!;
  };
  const best = candidates.map((c) => [c, dist(word.toLowerCase(), c.toLowerCase())] as const).sort((a, b) => a[1] - b[1])[0];
  return best && best[1] <= Math.max(2, Math.floor(word.length / 3)) ? best[0] : undefined;
}

/**
 * Validates options from the CLI (flags parsed by commander), the API (an object) or both merged
 * with a config file. An unknown or bad value is a usage error in the user's words: the flag (or
 * the API option, or the config file's key) and the value given, never a schema path.
 */
export function parseOptions<S extends z.ZodObject>(
  schema: S,
  raw: unknown,
  style: OptionStyle = 'cli',
  sources: OptionSources = {},
): z.infer<S> {
  const r = schema.strict().safeParse(raw ?? {});
  if (r.success) return r.data as z.infer<S>;
  const given = (raw ?? {}) as Record<string, unknown>;
  const name = (key: string) => sources[key] ?? (style === 'cli' ? flagOf(key) : `option "${key}"`);
  const lines = r.error.issues.flatMap((i) => {
    if (i.code === 'unrecognized_keys') {
      return i.keys.map((k) => {
        const near = closest(k, Object.keys(schema.shape));
        return `${sources[k] ?? (style === 'cli' ? flagOf(k) : `option "${k}"`)}: unknown option${near ? ` (did you mean ${style === 'cli' && !sources[k] ? flagOf(near) : `"${near}"`}?)` : ''}`;
      });
    }
    const key = String(i.path[0] ?? '');
    const value = given[key];
    const scalar = typeof value === 'string' || typeof value === 'number';
    const shown = scalar && !i.message.includes(String(value)) ? ` ${JSON.stringify(String(value))}` : '';
    return [`${name(key)}${shown}: ${i.message}`];
  });
  throw new RedgreenError('USAGE', `invalid option${lines.length > 1 ? 's' : ''}:\n  ${lines.join('\n  ')}`);
}
