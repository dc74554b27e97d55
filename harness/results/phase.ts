import { z } from 'zod';

/** A test phase (RED or GREEN) as a report records it: what the runner's results came to. */
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
  /** A sandbox limit the test command ran into (out of memory, disk full …), named with its size. */
  limit: z.object({ kind: z.enum(['memory', 'disk', 'file-size', 'pids']), message: z.string() }).optional(),
  /** Test ids whose status differed between repetitions. */
  flaky: z.array(z.string()).default([]),
  runs: z.number().default(1),
});
export type TestPhase = z.infer<typeof TestPhaseSchema>;
