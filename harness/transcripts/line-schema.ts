import { z } from 'zod';
import type { FixtureEvent } from '../pipeline/events.js';
import { FixtureResultSchema, PHASES } from '../pipeline/result.js';
import { VerdictSchema } from '../scoring/verdicts.js';

/**
 * One line of a fixture's JSONL as the writer records it: `{t, ts, ...event}`, or the final
 * `{t, ts, type: 'result', result}`. Mirrors FixtureEvent (the check below keeps them in step).
 */
const PhaseSchema = z.enum(PHASES);

const StreamSchema = z.object({
  text: z.string(),
  bytes: z.number(),
  sha256: z.string(),
  truncated: z.boolean(),
  utf8: z.boolean(),
});

const EventSchema = z.discriminatedUnion('type', [
  z.object({
    type: z.literal('fixture'),
    fixtureId: z.string(),
    title: z.string(),
    runner: z.string(),
    backend: z.string(),
    fixtureSha256: z.string(),
  }),
  z.object({ type: z.literal('phase'), phase: PhaseSchema, status: z.enum(['start', 'end']), durationMs: z.number().optional() }),
  z.object({ type: z.literal('sandbox'), sandboxId: z.string(), backend: z.string(), workdir: z.string() }),
  z.object({ type: z.literal('baseline'), sharedFrom: z.string(), state: z.string() }),
  z.object({
    type: z.literal('upload'),
    files: z.number(),
    bytes: z.number(),
    layer: z.string().optional(),
    ahead: z.boolean().optional(),
  }),
  z.object({
    type: z.literal('cache'),
    key: z.string(),
    hit: z.boolean(),
    bytes: z.number(),
    paths: z.array(z.string()),
    layer: z.boolean().optional(),
  }),
  z.object({
    type: z.literal('command'),
    phase: PhaseSchema,
    label: z.string(),
    command: z.string(),
    cwd: z.string(),
    envKeys: z.array(z.string()),
    exitCode: z.number(),
    signal: z.string().nullable(),
    timedOut: z.boolean(),
    durationMs: z.number(),
    stdout: StreamSchema,
    stderr: StreamSchema,
  }),
  z.object({
    type: z.literal('file'),
    phase: PhaseSchema,
    path: z.string(),
    bytes: z.number(),
    sha256: z.string(),
    action: z.enum(['write', 'remove']),
  }),
  z.object({
    type: z.literal('patch'),
    source: z.string(),
    sha256: z.string().nullable(),
    text: z.string().nullable(),
    status: z.string(),
    reason: z.string().optional(),
    files: z.array(z.string()),
    tampered: z.array(z.string()),
  }),
  z.object({
    type: z.literal('tests'),
    phase: PhaseSchema,
    run: z.number(),
    state: z.string(),
    counts: z.record(z.string(), z.number()),
    tests: z.array(z.object({ id: z.string(), status: z.string() })),
  }),
  z.object({ type: z.literal('verdict'), verdict: VerdictSchema, reason: z.string() }),
  z.object({ type: z.literal('error'), phase: PhaseSchema.nullable(), code: z.string(), message: z.string() }),
  z.object({ type: z.literal('result'), result: FixtureResultSchema }),
]);

/** The event types this reader knows; a line of another type comes from a newer writer. */
export const KNOWN_TYPES: ReadonlySet<string> = new Set(EventSchema.options.map((o) => o.shape.type.value));

export const LineSchema = z.intersection(z.object({ t: z.number(), ts: z.string() }), EventSchema);
export type TranscriptLine = z.infer<typeof LineSchema>;
export type LineEvent = z.infer<typeof EventSchema>;

// Compile-time guard: every FixtureEvent the pipeline emits can be read back by this schema.
type Covers<A, B extends A> = B;
export type _EveryEventIsReadable = Covers<LineEvent, FixtureEvent>;
