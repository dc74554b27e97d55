import { spawnSync } from 'node:child_process';
import { mkdir, mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { report as reportCommand } from '../commands/report.js';
import type { FixtureResult, TestPhase } from '../pipeline/result.js';
import { summarize, type Report } from '../reporters/report.js';
import type { Verdict } from '../scoring/verdicts.js';
import { openRun } from '../transcripts/reader.js';
import { renderRun } from '../transcripts/replay-render.js';
import { RUN_SCHEMA, type RunState } from '../transcripts/schema.js';
import { benchReportInBrowser } from './browser.js';
import { rng } from './stats.js';

const T0 = Date.parse('2026-01-01T00:00:00.000Z');
const VERDICTS: [Verdict, number][] = [
  ['valid', 0.86],
  ['not_green', 0.08],
  ['patch_error', 0.03],
  ['infra_error', 0.02],
  ['timeout', 0.01],
];
const at = (ms: number) => ({ t: Math.round(ms), ts: new Date(T0 + ms).toISOString() });
const stream = (text: string) => ({ text, bytes: Buffer.byteLength(text), sha256: '0'.repeat(64), truncated: false, utf8: true });

function testPhase(tests: { id: string; status: 'passed' | 'failed'; message?: string }[], durationMs: number): TestPhase {
  const failed = tests.filter((t) => t.status === 'failed').length;
  return {
    state: failed ? 'fail' : 'pass',
    exitCode: failed ? 1 : 0,
    durationMs: Math.round(durationMs),
    source: 'junit',
    problems: [],
    flaky: [],
    runs: 1,
    tests,
    counts: { passed: tests.length - failed, failed, errors: 0, skipped: 0, total: tests.length },
  };
}

/** One fixture on the least busy of the worker slots: its result and its transcript lines. */
function fixture(i: number, rand: () => number, slots: number[]): { result: FixtureResult; lines: object[] } {
  const id = `fx${String(i).padStart(4, '0')}_${['parse', 'cache', 'money', 'dates'][i % 4]}`;
  let r = rand();
  const verdict = VERDICTS.find(([, p]) => (r -= p) < 0)?.[0] ?? 'valid';
  const slot = slots.indexOf(Math.min(...slots));
  const durations: Record<string, number> = {
    create: 5 + rand() * 20,
    upload: 2 + rand() * 10,
    setup: rand() < 0.2 ? 2000 * rand() : 0,
    red: 300 + rand() * 3000,
    patch: 10 + rand() * 30,
    green: 300 + rand() * 3000,
    destroy: 3 + rand() * 10,
  };
  let clock = slots[slot]!;
  const spans: FixtureResult['spans'] = [];
  for (const [phase, d] of Object.entries(durations)) {
    spans.push({ phase, startMs: Math.round(clock), durationMs: Math.round(d) });
    clock += d;
  }
  slots[slot] = clock;
  const ids = Array.from({ length: 8 }, (_, j) => `tests/test_${id}.py::test_case_${j}`);
  const red = testPhase(
    ids.map((tid, j) =>
      j < 3
        ? { id: tid, status: 'failed', message: `AssertionError: assert ${j} == ${j + 1}\n  where ${j} = compute(${j})` }
        : { id: tid, status: 'passed' },
    ),
    durations.red!,
  );
  const green = testPhase(
    ids.map((tid, j) =>
      verdict === 'not_green' && j === 0
        ? { id: tid, status: 'failed', message: 'AssertionError: still wrong' }
        : { id: tid, status: 'passed' },
    ),
    durations.green!,
  );
  // One fixture in twenty has long output (900 lines), the rest a screenful.
  const output = (phase: string) =>
    `........ [100%]\n${Array.from({ length: i % 20 === 7 ? 900 : 25 }, (_, j) => `${phase} line ${j}: E   AssertionError in tests/test_${id}.py: expected ${j}`).join('\n')}\n`;
  const body = Array.from({ length: 9 }, (_, j) => (j === 4 ? `-    return x - ${j}\n+    return x + ${j}` : `     line_${j} = ${j}`)).join(
    '\n',
  );
  const patch = `diff --git a/src/${id}.py b/src/${id}.py\n--- a/src/${id}.py\n+++ b/src/${id}.py\n@@ -1,9 +1,9 @@\n${body}\n`;
  const result: FixtureResult = {
    fixtureId: id,
    title: `synthetic bug #${i} in ${id}`,
    runner: 'pytest',
    verdict,
    reason: verdict === 'valid' ? '3 fail→pass, 5 pass→pass' : `${verdict}: synthetic reason`,
    backend: 'local',
    sandboxId: `sb-${i}`,
    startedAt: new Date(T0 + spans[0]!.startMs).toISOString(),
    durationMs: Math.round(clock - spans[0]!.startMs),
    timings: Object.fromEntries(Object.entries(durations).map(([k, v]) => [k, Math.round(v * 10) / 10])),
    spans,
    slot,
    red,
    green,
    patch: { source: `oracle:oracles/${id}.patch`, sha256: null, status: 'applied', files: [`src/${id}.py`], tampered: [], fuzzy: false },
    observed: { failToPass: ids.slice(0, 3), passToPass: ids.slice(3) },
  };
  const lines: object[] = [
    {
      ...at(spans[0]!.startMs),
      type: 'fixture',
      fixtureId: id,
      title: result.title,
      runner: 'pytest',
      backend: 'local',
      fixtureSha256: 'a'.repeat(64),
    },
  ];
  for (const s of result.spans) {
    const end = s.startMs + s.durationMs;
    lines.push({ ...at(s.startMs), type: 'phase', phase: s.phase, status: 'start' });
    if (s.phase === 'patch')
      lines.push({
        ...at(s.startMs),
        type: 'patch',
        source: result.patch!.source,
        sha256: null,
        text: patch,
        status: 'none',
        files: result.patch!.files,
        tampered: [],
      });
    const tests = s.phase === 'red' ? red : s.phase === 'green' ? green : null;
    if (tests) {
      lines.push({
        ...at(end),
        type: 'command',
        phase: s.phase,
        label: `${s.phase.toUpperCase()} tests`,
        command: 'python3 -m pytest -q',
        cwd: '.',
        envKeys: ['PYTEST_ADDOPTS'],
        exitCode: tests.exitCode,
        signal: null,
        timedOut: false,
        durationMs: s.durationMs,
        stdout: stream(output(s.phase)),
        stderr: stream(''),
      });
      lines.push({
        ...at(end),
        type: 'tests',
        phase: s.phase,
        run: 1,
        state: tests.state,
        counts: tests.counts,
        tests: tests.tests.map((t) => ({ id: t.id, status: t.status })),
      });
    }
    lines.push({ ...at(end), type: 'phase', phase: s.phase, status: 'end', durationMs: s.durationMs });
  }
  lines.push({ ...at(clock), type: 'verdict', verdict, reason: result.reason }, { ...at(clock), type: 'result', result });
  return { result, lines };
}

/**
 * A run of `n` synthetic fixtures shaped like real ones (8 tests, RED and GREEN output, a small
 * patch, phases over `concurrency` slots), written as report.json and a transcript like a selfcheck's.
 */
export async function writeSyntheticRun(
  root: string,
  n: number,
  concurrency = 8,
): Promise<{ runId: string; reportsDir: string; transcriptsDir: string }> {
  const rand = rng(42);
  const runId = `20260101-000000-selfcheck-synthetic-${n}`;
  const [reportsDir, transcriptsDir] = [path.join(root, 'reports'), path.join(root, 'transcripts')];
  await mkdir(path.join(transcriptsDir, runId), { recursive: true });
  await mkdir(path.join(reportsDir, runId), { recursive: true });
  const slots = Array.from({ length: concurrency }, () => 0);
  const state: RunState = {
    schema: RUN_SCHEMA,
    runId,
    mode: 'selfcheck',
    status: 'completed',
    startedAt: new Date(T0).toISOString(),
    updatedAt: new Date(T0).toISOString(),
    backend: 'local',
    options: { concurrency, repeat: 1, ids: [], subject: 'oracle', baseline: true },
    harness: { version: 'bench', node: process.version, platform: 'synthetic' },
    fixtures: {},
  };
  const results: FixtureResult[] = [];
  for (let i = 0; i < n; i++) {
    const { result, lines } = fixture(i, rand, slots);
    results.push(result);
    state.fixtures[result.fixtureId] = { status: 'done', verdict: result.verdict, transcript: `${result.fixtureId}.jsonl` };
    await writeFile(path.join(transcriptsDir, runId, `${result.fixtureId}.jsonl`), `${lines.map((l) => JSON.stringify(l)).join('\n')}\n`);
  }
  const durationMs = Math.round(Math.max(...slots));
  const report: Report = {
    schema: 'redgreen.report/1',
    runId,
    mode: 'selfcheck',
    subject: 'oracle',
    backend: 'local',
    concurrency,
    repeat: 1,
    startedAt: state.startedAt,
    finishedAt: new Date(T0 + durationMs).toISOString(),
    durationMs,
    interrupted: false,
    unfinished: [],
    summary: summarize(results),
    fixtures: results,
  };
  await writeFile(path.join(transcriptsDir, runId, 'run.json'), JSON.stringify(state, null, 2));
  await writeFile(path.join(reportsDir, runId, 'report.json'), JSON.stringify(report, null, 2));
  return { runId, reportsDir, transcriptsDir };
}

/** In a child process, so that its peak RSS is this work's alone: one measurement, as JSON on stdout. */
async function child(kind: string, root: string, runId: string): Promise<void> {
  const t0 = performance.now();
  const where = { reports: path.join(root, 'reports'), transcripts: path.join(root, 'transcripts') };
  const print = process.stdout.write.bind(process.stdout);
  let bytes = 0;
  if (kind === 'report') {
    process.stdout.write = (() => true) as typeof process.stdout.write; // the command's "html: <path>" lines
    await reportCommand([runId], { ...where, format: ['html', 'junit', 'md'] });
  } else {
    const run = await openRun(path.join(where.transcripts, runId));
    await renderRun(run, { speed: 0, style: { color: false, full: false }, write: (s) => void (bytes += s.length) });
  }
  print(`${JSON.stringify({ ms: performance.now() - t0, rssMb: process.resourceUsage().maxRSS / 1024, bytes })}\n`);
}

/** Issue 5's budget: a 1,000-fixture run's reports and replay (--speed 0) in under 2 s and 200 MB each; report.html under 10 MB. */
export async function benchReports(n = Number(process.env.BENCH_REPORT_FIXTURES ?? 1000)): Promise<void> {
  const root = await mkdtemp(path.join(os.tmpdir(), 'rg-bench-reports-'));
  try {
    const { runId } = await writeSyntheticRun(root, n);
    const measure = (kind: string) => {
      const r = spawnSync(process.execPath, [fileURLToPath(import.meta.url), '--child', kind, root, runId], { encoding: 'utf8' });
      if (r.status !== 0) throw new Error(`bench ${kind} failed: ${r.stderr}`);
      return JSON.parse(r.stdout.trim().split('\n').at(-1)!) as { ms: number; rssMb: number; bytes: number };
    };
    const [rep, rpl] = [measure('report'), measure('replay')];
    const mb = async (f: string) => ((await stat(path.join(root, 'reports', runId, f))).size / 1024 / 1024).toFixed(2);
    console.log(`\nreports of a ${n}-fixture synthetic run (targets: < 2 s and < 200 MB each, report.html < 10 MB)`);
    console.log(
      `  report --format html,junit,md   ${rep.ms.toFixed(0)} ms   peak RSS ${rep.rssMb.toFixed(0)} MB   report.html ${await mb('report.html')} MB, junit.xml ${await mb('junit.xml')} MB, summary.md ${await mb('summary.md')} MB`,
    );
    console.log(
      `  replay --speed 0                ${rpl.ms.toFixed(0)} ms   peak RSS ${rpl.rssMb.toFixed(0)} MB   ${(rpl.bytes / 1024 / 1024).toFixed(1)} MB of text`,
    );
    await benchReportInBrowser(path.join(root, 'reports', runId, 'report.html'), n - 1);
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  if (process.argv[2] === '--child') await child(process.argv[3]!, process.argv[4]!, process.argv[5]!);
  else await benchReports();
}
