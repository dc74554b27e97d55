import { readFileSync } from 'node:fs';
import path from 'node:path';
import { expect, test } from 'vitest';
import type { FixtureResult } from '../../harness/pipeline/result.js';
import { LineSchema } from '../../harness/transcripts/line-schema.js';
import { runJsonInterval, TRANSCRIPT_WRITE_DELAY_MS, TranscriptWriter } from '../../harness/transcripts/writer.js';
import { useTempDirs } from '../helpers/temp-dirs.js';

const tempDir = useTempDirs('rg-writer-');
const nextTurn = () => new Promise((r) => setImmediate(r));
/** After the writer's timer: a timer as long, set later, fires after it. */
const afterDelay = () => new Promise((r) => setTimeout(r, TRANSCRIPT_WRITE_DELAY_MS));

test("a fixture's lines of a moment go out together, soon after; its result is on disk when it ends", async () => {
  const root = await tempDir();
  const w = await TranscriptWriter.open(root, {
    runId: 'r1',
    mode: 'selfcheck',
    backend: 'local',
    options: { subject: 'oracle' },
    fixtureIds: ['a'],
    version: '0.0.0',
  });
  const file = path.join(root, 'r1', 'a.jsonl');
  const lines = () =>
    readFileSync(file, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { type: string });
  w.onFixtureStart('a');
  w.onEvent('a', { type: 'phase', phase: 'red', status: 'start' });
  w.onEvent('a', { type: 'phase', phase: 'red', status: 'end', durationMs: 1 });
  expect(() => lines()).toThrow(/ENOENT/);
  await afterDelay();
  expect(lines().map((l) => l.type)).toEqual(['phase', 'phase']);
  w.onEvent('a', { type: 'verdict', verdict: 'valid', reason: 'ok' });
  await w.onFixtureEnd('a', { fixtureId: 'a', verdict: 'valid' } as FixtureResult);
  expect(lines().map((l) => l.type)).toEqual(['phase', 'phase', 'verdict', 'result']);
  await w.close('completed');
  await nextTurn();
  expect(lines()).toHaveLength(4);
  // Each line is the run's clock, the wall clock, then the event's own fields as they were.
  for (const l of lines() as Record<string, unknown>[]) {
    expect(Object.keys(l).slice(0, 3)).toEqual(['t', 'ts', 'type']);
    // (the result here is a partial one: the schema checks the events)
    if (l.type !== 'result') expect(LineSchema.safeParse(l).success, JSON.stringify(l)).toBe(true);
    expect(new Date(l.ts as string).toISOString()).toBe(l.ts);
  }
  const { t: _t, ts: _ts, ...end } = lines()[1] as Record<string, unknown>;
  expect(end).toEqual({ type: 'phase', phase: 'red', status: 'end', durationMs: 1 });
});

test('run.json is rewritten at most once a second, and a big run less often: its writes grow with the run, not its square', () => {
  expect(runJsonInterval(1)).toBe(1000);
  expect(runJsonInterval(200)).toBe(1000);
  expect(runJsonInterval(1000)).toBe(5000);
  expect(runJsonInterval(10_000)).toBe(50_000);
});
