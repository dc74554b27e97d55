import { z } from 'zod';
import { PatchSummarySchema } from '../patch/summary.js';
import { TestPhaseSchema } from '../results/phase.js';
import { VerdictSchema } from '../scoring/verdicts.js';

export const PHASES = ['agent', 'create', 'upload', 'setup', 'red', 'patch', 'green', 'destroy'] as const;
export type Phase = (typeof PHASES)[number];

export { CountsSchema, TestCaseSchema, TestPhaseSchema, type TestPhase } from '../results/phase.js';
export { PatchSummarySchema, type PatchSummary } from '../patch/summary.js';

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
  /** Several models graded at once: the run whose RED baseline this fixture used (another model's run). */
  baselineFrom: z.string().optional(),
});
export type FixtureResult = z.infer<typeof FixtureResultSchema>;
