import { appendFile, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';
import type { FixtureEvent } from '../../harness/pipeline/events.js';
import type { FixtureResult } from '../../harness/pipeline/result.js';
import { openRun } from '../../harness/transcripts/reader.js';
import { renderRun } from '../../harness/transcripts/replay-render.js';
import { RUN_SCHEMA } from '../../harness/transcripts/schema.js';

const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(dirs.splice(0).map((d) => rm(d, { recursive: true, force: true })));
});

const stream = (text: string) => ({ text, bytes: Buffer.byteLength(text), sha256: 'ab'.repeat(32), truncated: false, utf8: true });
const LONG = Array.from({ length: 60 }, (_, i) => `output line ${i}`).join('\n');
const PATCH =
  'diff --git a/calc.py b/calc.py\n--- a/calc.py\n+++ b/calc.py\n@@ -1,2 +1,2 @@\n def add(a, b):\n-    return a - b\n+    return a + b\n';
const tests = (status: string) => [
  { id: 'test_calc.py::test_add', status },
  { id: 'test_calc.py::test_zero', status: 'passed' },
];
const RESULT: FixtureResult = {
  fixtureId: 'calc',
  title: 'add() subtracts',
  runner: 'pytest',
  verdict: 'valid',
  reason: '1 fail→pass, 1 pass→pass',
  backend: 'local',
  sandboxId: 'sb',
  startedAt: '2026-01-01T00:00:00.000Z',
  durationMs: 2000,
  timings: { red: 900, green: 800 },
  spans: [],
  red: null,
  green: null,
  observed: null,
  patch: { source: 'oracle:oracles/calc.patch', sha256: null, status: 'applied', files: ['calc.py'], tampered: [], fuzzy: false },
};
/** A fixture's life on the run clock: t is what the writer records, ms since the run started. */
const STORY: [number, FixtureEvent | { type: 'result'; result: FixtureResult }][] = [
  [
    100,
    { type: 'fixture', fixtureId: 'calc', title: 'add() subtracts', runner: 'pytest', backend: 'local', fixtureSha256: 'cd'.repeat(32) },
  ],
  [110, { type: 'sandbox', sandboxId: 'sb', backend: 'local', workdir: '/work/space' }],
  [120, { type: 'phase', phase: 'red', status: 'start' }],
  [
    1000,
    {
      type: 'command',
      phase: 'red',
      label: 'RED tests',
      command: 'python3 -m pytest -q',
      cwd: '.',
      envKeys: ['PYTEST_ADDOPTS'],
      exitCode: 1,
      signal: null,
      timedOut: false,
      durationMs: 880,
      stdout: stream(LONG),
      stderr: stream(''),
    },
  ],
  [
    1001,
    {
      type: 'tests',
      phase: 'red',
      run: 1,
      state: 'fail',
      counts: { passed: 1, failed: 1, errors: 0, skipped: 0, total: 2 },
      tests: tests('failed'),
    },
  ],
  [
    1010,
    { type: 'patch', source: 'oracle:oracles/calc.patch', sha256: null, text: PATCH, status: 'none', files: ['calc.py'], tampered: [] },
  ],
  [
    1900,
    {
      type: 'command',
      phase: 'green',
      label: 'GREEN tests',
      command: 'python3 -m pytest -q',
      cwd: 'sub',
      envKeys: [],
      exitCode: 0,
      signal: null,
      timedOut: false,
      durationMs: 870,
      stdout: stream('2 passed\n'),
      stderr: stream(''),
    },
  ],
  [
    1901,
    {
      type: 'tests',
      phase: 'green',
      run: 1,
      state: 'pass',
      counts: { passed: 2, failed: 0, errors: 0, skipped: 0, total: 2 },
      tests: tests('passed'),
    },
  ],
  [2100, { type: 'verdict', verdict: 'valid', reason: '1 fail→pass, 1 pass→pass' }],
  [2101, { type: 'result', result: RESULT }],
];

async function transcript(
  lines: string[] = STORY.map(([t, e]) => JSON.stringify({ t, ts: '2026-01-01T00:00:00.000Z', ...e })),
): Promise<{ dir: string; file: string }> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'rg-replay-'));
  dirs.push(dir);
  const run = {
    schema: RUN_SCHEMA,
    runId: 'r1',
    mode: 'selfcheck',
    status: 'completed',
    startedAt: '2026-01-01T00:00:00.000Z',
    updatedAt: '2026-01-01T00:00:02.000Z',
    backend: 'local',
    options: { subject: 'oracle' },
    harness: { version: '0.1.0', node: 'v20', platform: 'linux-x64' },
    fixtures: { calc: { status: 'done', verdict: 'valid', transcript: 'calc.jsonl' } },
  };
  await writeFile(path.join(dir, 'run.json'), JSON.stringify(run));
  const file = path.join(dir, 'calc.jsonl');
  await writeFile(file, `${lines.join('\n')}\n`);
  return { dir, file };
}

async function replay(dir: string, speed = 0, full = false) {
  let out = '';
  const sleeps: number[] = [];
  const summary = await renderRun(await openRun(dir), {
    speed,
    style: { color: false, full },
    write: (s) => void (out += s),
    sleep: async (ms) => void sleeps.push(ms),
  });
  return { out, sleeps, summary };
}

describe('replay (render)', () => {
  test("tells the fixture's story: commands with cwd, exit codes and durations, folded output, the patch, RED against GREEN, the verdict", async () => {
    const { dir } = await transcript();
    const { out, summary } = await replay(dir);
    expect(out).toContain('━━ calc · add() subtracts');
    expect(out).toContain('$ python3 -m pytest -q');
    expect(out).toMatch(/RED tests · cwd \/work\/space · env PYTEST_ADDOPTS · exit 1 · 880 ms/);
    expect(out).toMatch(/GREEN tests · cwd \/work\/space\/sub · env \(none extra\) · exit 0 · 870 ms/);
    expect(out).toContain('output line 0');
    expect(out).toContain('output line 59');
    expect(out).toContain('… 48 lines folded (--full shows them) …');
    expect(out).not.toContain('output line 30');
    expect(out).toContain('-    return a - b');
    expect(out).toContain('+    return a + b');
    expect(out).toMatch(/test_calc\.py::test_add\s+✘ failed\s+✔ passed/);
    expect(out).toMatch(/test_calc\.py::test_zero\s+✔ passed\s+✔ passed/);
    expect(out).toContain('verdict: valid — 1 fail→pass, 1 pass→pass');
    expect(summary).toMatchObject({ fixtures: 1, verdicts: { valid: 1 }, problems: 0, torn: 0, unfinished: [] });
    expect((await replay(dir, 0, true)).out).toContain('output line 30');
  });

  test('--speed scales the pauses of the run; --speed 0 shows it all at once', async () => {
    const { dir } = await transcript();
    const at1 = await replay(dir, 1);
    expect(at1.sleeps.reduce((a, b) => a + b, 0)).toBeCloseTo(2101 - 100);
    const at4 = await replay(dir, 4);
    expect(at4.sleeps.reduce((a, b) => a + b, 0)).toBeCloseTo((2101 - 100) / 4);
    expect(at4.sleeps).toContain((1000 - 120) / 4);
    expect((await replay(dir, 0)).sleeps).toEqual([]);
    expect(at4.out).toBe((await replay(dir, 0)).out);
  });

  test('a corrupted line is reported with its line number and the rest of the story is still shown', async () => {
    const lines = STORY.map(([t, e]) => JSON.stringify({ t, ts: '2026-01-01T00:00:00.000Z', ...e }));
    lines[4] = lines[4]!.slice(0, 40); // the RED tests line, cut in the middle of the file
    const { dir, file } = await transcript(lines);
    const { out, summary } = await replay(dir);
    expect(out).toContain(`⚠ ${file}:5: not valid JSON`);
    expect(out.indexOf(':5: not valid JSON')).toBeGreaterThan(out.indexOf('RED tests · cwd'));
    expect(out).toContain('+    return a + b');
    expect(out).toContain('verdict: valid');
    expect(summary.problems).toBe(1);
  });

  test('a torn last line (a killed run) is noted and everything before it is shown', async () => {
    const lines = STORY.slice(0, 6).map(([t, e]) => JSON.stringify({ t, ts: '2026-01-01T00:00:00.000Z', ...e }));
    const { dir, file } = await transcript(lines);
    await appendFile(file, '{"t":1900,"ts":"2026-01-01T00:00:01.900Z","type":"command","phase":"gr');
    expect((await readFile(file, 'utf8')).endsWith('"gr')).toBe(true);
    const { out, summary } = await replay(dir);
    expect(out).toContain('+    return a + b');
    expect(out).toContain(`⚠ ${file}:7: torn last line (cut off while it was written), ignored`);
    expect(out).toContain('the transcript ends here without a verdict');
    expect(summary).toMatchObject({ torn: 1, problems: 0, unfinished: ['calc'] });
  });
});
