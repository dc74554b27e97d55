import { z } from 'zod';
import { VerdictSchema } from '../scoring/verdicts.js';

export const PHASES = ['agent', 'create', 'upload', 'setup', 'red', 'patch', 'green', 'destroy'] as const;
export type Phase = (typeof PHASES)[number];

export const TestCaseSchema = z.object({
  id: z.string(),
  status: z.enum(['passed', 'failed', 'error', 'skipped']),
  durationMs: z.number().optional(),
  message: z.string().optional(),
});

export const CountsSchema = z.object({
  passed: z.number(),
  failed: z.number(),
  errors: z.number(),
  skipped: z.number(),
  total: z.number(),
});

/** One test phase (RED or GREEN), possibly repeated. */
export const TestPhaseSchema = z.object({
  state: z.enum(['pass', 'fail', 'broken', 'timeout']),
  exitCode: z.number(),
  durationMs: z.number(),
  source: z.string(),
  counts: CountsSchema,
  tests: z.array(TestCaseSchema),
  problems: z.array(z.string()),
  /** Test ids whose status differed between repetitions. */
  flaky: z.array(z.string()).default([]),
  runs: z.number().default(1),
});
export type TestPhase = z.infer<typeof TestPhaseSchema>;

export const PatchSummarySchema = z.object({
  source: z.string(),
  sha256: z.string().nullable(),
  status: z.enum(['applied', 'already_applied', 'failed', 'not_a_diff', 'empty', 'unsafe', 'missing', 'none']),
  reason: z.string().optional(),
  files: z.array(z.string()).default([]),
  /** Protected paths the patch changed; kept as the fixture had them. */
  tampered: z.array(z.string()).default([]),
  /** Applied only by the fuzzy fallback (reduced context, whitespace ignored). */
  fuzzy: z.boolean().default(false),
});
export type PatchSummary = z.infer<typeof PatchSummarySchema>;

export const FixtureResultSchema = z.object({
  fixtureId: z.string(),
  title: z.string().optional(),
  runner: z.string().optional(),
  verdict: VerdictSchema,
  reason: z.string(),
  backend: z.string(),
  sandboxId: z.string().nullable(),
  startedAt: z.string(),
  durationMs: z.number(),
  timings: z.record(z.string(), z.number()),
  red: TestPhaseSchema.nullable(),
  green: TestPhaseSchema.nullable(),
  patch: PatchSummarySchema.nullable(),
  /** failToPass / passToPass as this run observed them. */
  observed: z.object({ failToPass: z.array(z.string()), passToPass: z.array(z.string()) }).nullable(),
  error: z.object({ code: z.string(), message: z.string() }).optional(),
  /** Agent runs: which patch source (model, agent command) this result grades. */
  subject: z.string().optional(),
  /** Agent runs: declared tests passing after the patch. */
  failToPass: z.object({ passed: z.number(), total: z.number() }).nullable().optional(),
  passToPass: z.object({ passed: z.number(), total: z.number() }).nullable().optional(),
  flakyDependence: z.array(z.string()).optional(),
  /** Phases on the run's clock (ms since the run started), for the timeline. */
  spans: z.array(z.object({ phase: z.string(), startMs: z.number(), durationMs: z.number() })).default([]),
  /** The worker slot (0 … concurrency-1) the fixture ran in. */
  slot: z.number().optional(),
  /** Attempts made (infrastructure errors are retried). */
  attempts: z.number().optional(),
});
export type FixtureResult = z.infer<typeof FixtureResultSchema>;
