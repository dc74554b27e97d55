import { z } from 'zod';
import { VerdictSchema } from '../scoring/verdicts.js';

export const RUN_SCHEMA = 'redgreen.run/1';

export const RunStateSchema = z.object({
  schema: z.literal(RUN_SCHEMA),
  runId: z.string(),
  mode: z.enum(['selfcheck', 'run']),
  status: z.enum(['running', 'completed', 'interrupted', 'failed']),
  startedAt: z.string(),
  updatedAt: z.string(),
  backend: z.string(),
  options: z.record(z.string(), z.unknown()),
  harness: z.object({ version: z.string(), node: z.string(), platform: z.string() }),
  fixtures: z.record(
    z.string(),
    z.object({
      status: z.enum(['pending', 'running', 'done', 'unfinished']),
      verdict: VerdictSchema.optional(),
      transcript: z.string(),
    }),
  ),
});
export type RunState = z.infer<typeof RunStateSchema>;
