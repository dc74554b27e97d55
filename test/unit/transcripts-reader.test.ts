import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';
import { RedgreenError } from '../../harness/errors.js';
import { locateRun, openRun, parseJsonl, readFixture } from '../../harness/transcripts/reader.js';
import { RUN_SCHEMA } from '../../harness/transcripts/schema.js';

const dirs: string[] = [];
async function runDir(runJson: unknown, files: Record<string, string> = {}): Promise<string> {
  const d = await mkdtemp(path.join(os.tmpdir(), 'rg-reader-'));
  dirs.push(d);
  await writeFile(path.join(d, 'run.json'), typeof runJson === 'string' ? runJson : JSON.stringify(runJson));
  for (const [name, text] of Object.entries(files)) await writeFile(path.join(d, name), text);
  return d;
}
afterEach(async () => {
  await Promise.all(dirs.splice(0).map((d) => rm(d, { recursive: true, force: true })));
});

const RUN = {
  schema: RUN_SCHEMA,
  runId: 'r1',
  mode: 'selfcheck',
  status: 'completed',
  startedAt: '2026-01-01T00:00:00.000Z',
  updatedAt: '2026-01-01T00:00:01.000Z',
  backend: 'local',
  options: { subject: 'oracle' },
  harness: { version: '0.1.0', node: 'v20.0.0', platform: 'linux-x64' },
  fixtures: { a: { status: 'done', verdict: 'valid', transcript: 'a.jsonl' } },
};
const ev = (t: number, e: Record<string, unknown>) => JSON.stringify({ t, ts: '2026-01-01T00:00:00.000Z', ...e });
const PHASE = (t: number, phase: string, status: string) => ev(t, { type: 'phase', phase, status });
const VERDICT = ev(9, { type: 'verdict', verdict: 'valid', reason: 'ok' });

async function refusal(p: Promise<unknown>): Promise<RedgreenError> {
  const e = await p.then(
    () => null,
    (x: unknown) => x,
  );
  expect(e).toBeInstanceOf(RedgreenError);
  return e as RedgreenError;
}

describe('parseJsonl', () => {
  test('a torn last line is noted with its number and every line before it is kept', () => {
    const text = `${PHASE(1, 'red', 'start')}\n${PHASE(2, 'red', 'end')}\n{"t":3,"ts":"x","type":"comm`;
    const r = parseJsonl(text);
    expect(r.torn).toBe(3);
    expect(r.problems).toEqual([]);
    expect(r.lines.map((l) => l.line)).toEqual([1, 2]);
  });

  test('a corrupted line in the middle is reported with its line number; the lines after it are still read', () => {
    const text = [PHASE(1, 'red', 'start'), '{"t":2, this is not json', PHASE(3, 'red', 'end'), VERDICT, ''].join('\n');
    const r = parseJsonl(text);
    expect(r.torn).toBeNull();
    expect(r.problems).toHaveLength(1);
    expect(r.problems[0]!.line).toBe(2);
    expect(r.problems[0]!.message).toMatch(/not valid JSON/);
    expect(r.lines.map((l) => [l.line, l.type])).toEqual([
      [1, 'phase'],
      [3, 'phase'],
      [4, 'verdict'],
    ]);
  });

  test('a broken last line that ends with a newline is corruption, not a torn write', () => {
    const r = parseJsonl(`${PHASE(1, 'red', 'start')}\n{"t":2,"ts"\n`);
    expect(r.torn).toBeNull();
    expect(r.problems).toEqual([{ line: 2, message: expect.stringMatching(/not valid JSON/) }]);
  });

  test('a line of an unknown event type, or one missing fields, is named and skipped', () => {
    const r = parseJsonl([ev(1, { type: 'telemetry', x: 1 }), ev(2, { type: 'command', phase: 'red' }), VERDICT].join('\n'));
    expect(r.problems.map((p) => p.line)).toEqual([1, 2]);
    expect(r.problems[0]!.message).toMatch(/unknown event type "telemetry"/);
    expect(r.problems[1]!.message).toMatch(/not a transcript event \(label: /);
    expect(r.lines).toHaveLength(1);
  });

  test('with `only`, other lines are skipped unparsed (a broken one too); a wanted one is kept whatever its output prints', () => {
    const out = { text: '{"type":"patch"} printed by a test', bytes: 33, sha256: 'x', truncated: false, utf8: true };
    const command = ev(2, {
      type: 'command',
      phase: 'red',
      label: 'RED tests',
      command: 'pytest',
      cwd: '.',
      envKeys: [],
      exitCode: 1,
      signal: null,
      timedOut: false,
      durationMs: 5,
      stdout: out,
      stderr: { ...out, text: '' },
    });
    const r = parseJsonl([PHASE(1, 'red', 'start'), '{"t":2, not json', command, VERDICT].join('\n'), new Set(['patch', 'command']));
    expect(r.problems).toEqual([]);
    expect(r.lines.map((l) => [l.line, l.type])).toEqual([[3, 'command']]);
  });
});

describe('openRun', () => {
  test('reads a run.json of the current schema', async () => {
    const run = await openRun(await runDir(RUN));
    expect(run.state.runId).toBe('r1');
  });

  test('an older schema version is refused with a message naming it and the version this redgreen reads', async () => {
    const e = await refusal(openRun(await runDir({ ...RUN, schema: 'redgreen.run/0' })));
    expect(e.message).toContain('schema "redgreen.run/0"');
    expect(e.message).toContain('an older transcript schema');
    expect(e.message).toContain(`this redgreen reads ${RUN_SCHEMA}`);
    expect(e.message).toContain('recorded by redgreen 0.1.0');
    expect(e.exitCode).toBe(2);
  });

  test('a newer schema version says to upgrade; a run.json without a version says so', async () => {
    const newer = await refusal(openRun(await runDir({ ...RUN, schema: 'redgreen.run/7' })));
    expect(newer.message).toContain('"redgreen.run/7"');
    expect(newer.message).toContain('a newer transcript schema');
    expect(newer.hint).toMatch(/upgrade/);
    const { schema: _, ...unversioned } = RUN;
    const none = await refusal(openRun(await runDir(unversioned)));
    expect(none.message).toMatch(/no schema version/);
  });

  test('a missing or broken run.json is a clear error', async () => {
    const broken = await refusal(openRun(await runDir('{"schema": "redgreen.run/1",')));
    expect(broken.message).toMatch(/run\.json: not valid JSON/);
    const invalid = await refusal(openRun(await runDir({ ...RUN, mode: 'party' })));
    expect(invalid.message).toMatch(/not a valid redgreen\.run\/1 run \(mode: /);
    const missing = await refusal(locateRun(path.join(os.tmpdir(), 'no-such-run-here'), os.tmpdir()));
    expect(missing.message).toMatch(/no transcript at/);
  });
});

describe('readFixture', () => {
  test('reads the final result, and a fixture that never started is "missing"', async () => {
    const dir = await runDir(
      { ...RUN, fixtures: { ...RUN.fixtures, b: { status: 'pending', transcript: 'b.jsonl' } } },
      { 'a.jsonl': `${PHASE(1, 'red', 'start')}\n${VERDICT}\n` },
    );
    const run = await openRun(dir);
    const a = await readFixture(run, 'a');
    expect(a.missing).toBe(false);
    expect(a.lines).toHaveLength(2);
    const b = await readFixture(run, 'b');
    expect(b.missing).toBe(true);
  });

  test('a transcript name that leaves the folder is refused, not followed', async () => {
    const run = await openRun(await runDir({ ...RUN, fixtures: { a: { status: 'done', transcript: '../../etc/passwd.jsonl' } } }));
    const a = await readFixture(run, 'a');
    expect(a.lines).toEqual([]);
    expect(a.problems[0]!.message).toMatch(/not a \.jsonl file of this folder/);
  });
});
