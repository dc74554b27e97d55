import { mkdtemp, readdir, readFile, rm, unlink } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { writeSyntheticRun } from '../../harness/bench/reports.js';
import { loadReport, renderFormats } from '../../harness/commands/report.js';
import type { FixtureResult } from '../../harness/pipeline/result.js';
import { renderHtml } from '../../harness/reporters/html.js';
import { ExtrasCollector, loadExtras } from '../../harness/reporters/html-transcript.js';
import type { FixtureEvent } from '../../harness/pipeline/events.js';
import { assignLanes, BUDGET, withSpans, type FixtureExtras } from '../../harness/reporters/html-data.js';
import { summarize, type Report } from '../../harness/reporters/report.js';

const HOSTILE = '</script><img src=x onerror=alert(1)> & "q" \u2028';
function fixture(id: string, extra: Partial<FixtureResult> = {}): FixtureResult {
  return {
    fixtureId: id,
    title: `title of ${id}`,
    verdict: 'valid',
    reason: 'ok',
    backend: 'local',
    sandboxId: null,
    startedAt: '2026-01-01T00:00:00.000Z',
    durationMs: 1000,
    timings: {},
    spans: [
      { phase: 'red', startMs: 0, durationMs: 500 },
      { phase: 'green', startMs: 500, durationMs: 500 },
    ],
    red: null,
    green: null,
    patch: null,
    observed: null,
    ...extra,
  };
}
function report(fixtures: FixtureResult[], subject = 'oracle'): Report {
  return {
    schema: 'redgreen.report/1',
    runId: `run-${subject}`,
    mode: 'selfcheck',
    subject,
    backend: 'local',
    concurrency: 2,
    repeat: 1,
    startedAt: '2026-01-01T00:00:00.000Z',
    finishedAt: '2026-01-01T00:00:02.000Z',
    durationMs: 2000,
    interrupted: false,
    unfinished: [],
    summary: summarize(fixtures),
    fixtures,
  };
}
const dataOf = (html: string) =>
  JSON.parse(/<script type="application\/json" id="rg-data">(.*?)<\/script>/s.exec(html)![1]!) as {
    ids: string[];
    runs: { fixtures: { reason: string; logs?: { out: string }[] }[] }[];
  };

const roots: string[] = [];
afterAll(async () => {
  await Promise.all(roots.map((d) => rm(d, { recursive: true, force: true })));
});

describe('report.html', () => {
  test('is self-contained: inline style and script, no URL to fetch, a policy that forbids any request', () => {
    const html = renderHtml([{ report: report([fixture('a'), fixture('b', { verdict: 'not_green', reason: 'still failing' })]) }]);
    expect(html).not.toMatch(/\s(src|href)="(?!#)/);
    expect(html).not.toMatch(/url\(|@import|https?:\/\//);
    expect(html).toContain(`content="default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:"`);
    for (const id of ['summary', 'matrix', 'timeline', 'fixtures']) expect(html).toContain(`<section id="${id}">`);
    expect(html).toContain('<b>1/2</b> valid of all fixtures');
    expect(html).toContain('No transcript found for run-oracle');
  });

  test('recorded text cannot break out of the page: markup is escaped, the embedded data round-trips', () => {
    const f = fixture(`x${HOSTILE}`, { reason: HOSTILE, title: HOSTILE });
    const extras = new Map<string, FixtureExtras>([[f.fixtureId, { patch: HOSTILE, logs: [] }]]);
    const html = renderHtml([{ report: report([f]), extras }]);
    expect(html.match(/<\/script>/g)).toHaveLength(2);
    expect(html).not.toContain('<img');
    const data = dataOf(html);
    expect(data.ids[0]).toBe(`x${HOSTILE}`);
    expect(data.runs[0]!.fixtures[0]!.reason).toBe(HOSTILE);
  });

  test('several runs make one matrix of fixtures × runs, with a fixture missing from a run shown as such', () => {
    const html = renderHtml([
      { report: report([fixture('a'), fixture('b')], 'model-1') },
      { report: report([fixture('a', { verdict: 'not_green' })], 'model-2') },
    ]);
    expect(html).toContain('2 fixtures × 2 runs');
    expect(html).toMatch(
      /<tr data-i="1" data-k="b"><td><a href="#f-1">b<\/a><\/td><td><span class="v v-valid ok">valid<\/span><\/td><td class="absent">—<\/td><\/tr>/,
    );
    expect(html.match(/<figure class="timeline"/g)).toHaveLength(2);
  });

  test('the timeline puts fixtures without a recorded slot on the first lane free at their start', () => {
    const at = (startMs: number, durationMs: number, slot?: number) =>
      fixture(`f${startMs}`, { spans: [{ phase: 'red', startMs, durationMs }], ...(slot === undefined ? {} : { slot }) });
    expect(assignLanes([at(0, 100), at(50, 100), at(120, 10), at(0, 10, 3)])).toEqual([0, 1, 0, 3]);
  });

  test('a report from before phase spans gets its timeline rebuilt from each start and its timings', () => {
    const old = fixture('old', {
      spans: [],
      startedAt: '2026-01-01T00:00:01.500Z',
      timings: { create: 10, red: 500, patch: 20, green: 400 },
    });
    expect(withSpans(report([old]))[0]!.spans).toEqual([
      { phase: 'create', startMs: 1500, durationMs: 10 },
      { phase: 'red', startMs: 1510, durationMs: 500 },
      { phase: 'patch', startMs: 2010, durationMs: 20 },
      { phase: 'green', startMs: 2030, durationMs: 400 },
    ]);
  });

  test("a run's page takes its patches and logs from the run's events, as the transcript has them, without reading it again", async () => {
    const root = await mkdtemp(path.join(os.tmpdir(), 'rg-html-'));
    roots.push(root);
    const { runId, reportsDir, transcriptsDir } = await writeSyntheticRun(root, 300);
    const loaded = await loadReport(runId, { reportsDir, transcriptsDir });
    // The events the run told its reporters: what its transcript recorded, line by line.
    const collector = new ExtrasCollector(loaded.report.fixtures.length);
    const files = (await readdir(loaded.transcriptDir)).filter((f) => f.endsWith('.jsonl'));
    for (const f of files)
      for (const line of (await readFile(path.join(loaded.transcriptDir, f), 'utf8')).split('\n').filter(Boolean)) {
        const { t: _t, ts: _ts, ...event } = JSON.parse(line) as FixtureEvent & { t: number; ts: string };
        collector.onEvent(f.replace(/\.jsonl$/, ''), event as FixtureEvent);
      }
    const read = await loadExtras(loaded.report, loaded.transcriptDir);
    expect(read.extras!.size).toBe(300);
    expect(new Map([...collector.extras].sort())).toEqual(new Map([...read.extras!].sort()));
    const fromDisk = (await renderFormats([loaded], ['html'], () => undefined)).get('html')!;
    // Nothing of the transcript is read when the events gave every fixture's extras: not even run.json.
    for (const f of [...files, 'run.json']) await unlink(path.join(loaded.transcriptDir, f));
    const warnings: string[] = [];
    const collected = (await renderFormats([{ ...loaded, collected: collector }], ['html'], (w) => warnings.push(w))).get('html')!;
    expect(warnings).toEqual([]);
    expect(dataOf(collected)).toEqual(dataOf(fromDisk));
    // Collected for another number of fixtures (cut to another budget): read from the transcript, now gone.
    const logsOf = (html: string) => dataOf(html).runs[0]!.fixtures.flatMap((f) => f.logs ?? []);
    expect(logsOf(collected)).toHaveLength(600);
    const other = new ExtrasCollector(1000);
    for (const [id, e] of collector.extras) other.extras.set(id, e);
    expect(logsOf((await renderFormats([{ ...loaded, collected: other }], ['html'], () => undefined)).get('html')!)).toEqual([]);
  });

  // Renders 1,000 fixtures' logs and patches: 5.7 s beside busy loops, against the unit budget of 15 s.
  test(
    'a 1,000-fixture run stays under 10 MB with its logs and patches, cut to the budget and saying so',
    { timeout: 60_000 },
    async () => {
      const root = await mkdtemp(path.join(os.tmpdir(), 'rg-html-'));
      roots.push(root);
      const { runId, reportsDir, transcriptsDir } = await writeSyntheticRun(root, 1000);
      const loaded = await loadReport(runId, { reportsDir, transcriptsDir });
      const warnings: string[] = [];
      const html = (await renderFormats([loaded], ['html'], (w) => warnings.push(w))).get('html')!;
      expect(warnings).toEqual([]);
      expect(Buffer.byteLength(html)).toBeLessThan(10 * 1024 * 1024);
      expect(html.match(/<details class="fx"/g)).toHaveLength(1000);
      // One SVG path per phase colour, plus the lane stripes and the fixture separators, however many fixtures.
      const svg = /<svg class="tl-svg".*?<\/svg>/s.exec(html)![0];
      expect(svg.match(/<path/g)!.length).toBeLessThanOrEqual(10);
      const data = dataOf(html);
      const logs = data.runs[0]!.fixtures.flatMap((f) => f.logs ?? []);
      expect(logs).toHaveLength(2000);
      const big = logs.filter((l) => l.out.includes('characters cut for the HTML report'));
      expect(big.length).toBeGreaterThan(0);
      expect(Math.max(...logs.map((l) => l.out.length))).toBeLessThan(BUDGET.logBytes / 1000 + 200);
    },
  );
});
