import type { FixtureResult, TestPhase } from '../pipeline/result.js';
import { PHASES } from '../pipeline/result.js';
import type { Verdict } from '../scoring/verdicts.js';
import type { Report } from './report.js';

/** What the transcript adds to a fixture's report: the patch text and the commands' output. */
export interface FixtureExtras {
  patch: string | null;
  logs: LogEntry[];
}

export interface LogEntry {
  phase: string;
  label: string;
  command: string;
  cwd: string;
  exitCode: number;
  timedOut: boolean;
  durationMs: number;
  stdout: { text: string; bytes: number };
  stderr: { text: string; bytes: number };
}

/** One run as the page shows it; `extras` is absent when its transcript was not found. */
export interface HtmlRun {
  report: Report;
  extras?: ReadonlyMap<string, FixtureExtras>;
}

/** How much text the page may carry: the file must stay small for a thousand fixtures. */
export const BUDGET = { logBytes: 5_000_000, patchBytes: 2_000_000, messageChars: 600, minPerFixture: 1_500, maxPerFixture: 32_000 };

type ClientPhase = {
  state: string;
  exit: number;
  ms: number;
  source: string;
  tests: [string, string, string?][];
  problems: string[];
  flaky: string[];
};

export interface ClientFixture {
  id: string;
  title?: string;
  verdict: Verdict;
  reason: string;
  ms: number;
  lane: number;
  spans: [number, number, number][];
  timings: Record<string, number>;
  red: ClientPhase | null;
  green: ClientPhase | null;
  patch: (Omit<NonNullable<FixtureResult['patch']>, 'sha256'> & { sha256: string | null; text?: string; cut?: number }) | null;
  graded?: string;
  error?: string;
  attempts?: number;
  logs?: (Omit<LogEntry, 'stdout' | 'stderr'> & { out: string; err: string; outBytes: number; errBytes: number })[];
}

export interface ClientRun {
  runId: string;
  subject: string;
  mode: string;
  backend: string;
  durationMs: number;
  lanes: number;
  transcript: boolean;
  fixtures: ClientFixture[];
}

/** Head and tail of a long text within `max` characters, saying how much was cut. */
export function clip(text: string, max: number): string {
  if (text.length <= max) return text;
  const head = Math.floor(max / 4);
  const tail = max - head;
  const cut = `${text.slice(0, head)}\n[… ${text.length - max} characters cut for the HTML report; the transcript has the rest …]\n${text.slice(-tail)}`;
  // Copied, not sliced: a slice would keep the whole original string alive (V8 sliced strings).
  return Buffer.from(cut, 'utf8').toString('utf8');
}

function phase(p: TestPhase | null): ClientPhase | null {
  if (!p) return null;
  const tests = p.tests.map((t): [string, string, string?] =>
    t.message && t.status !== 'passed' ? [t.id, t.status, clip(t.message, BUDGET.messageChars)] : [t.id, t.status],
  );
  return { state: p.state, exit: p.exitCode, ms: p.durationMs, source: p.source, tests, problems: p.problems, flaky: p.flaky };
}

/** Worker slots for the timeline; results without a recorded slot get the first lane free at their start. */
export function assignLanes(fixtures: readonly FixtureResult[]): number[] {
  const laneEnds: number[] = [];
  const lanes = fixtures.map((f) => f.slot ?? -1);
  fixtures.forEach((f) => {
    if (f.slot !== undefined) laneEnds[f.slot] = Math.max(laneEnds[f.slot] ?? 0, end(f));
  });
  const unslotted = fixtures.map((f, i) => ({ f, i })).filter((x) => x.f.slot === undefined && x.f.spans.length);
  unslotted.sort((a, b) => a.f.spans[0]!.startMs - b.f.spans[0]!.startMs);
  for (const { f, i } of unslotted) {
    const start = f.spans[0]!.startMs;
    let lane = laneEnds.findIndex((e) => e === undefined || e <= start);
    if (lane < 0) lane = laneEnds.length;
    laneEnds[lane] = end(f);
    lanes[i] = lane;
  }
  return lanes;
}

// Spans keep their phase as a plain string (old reports); one not in PHASES draws in the first row.
const PHASE_INDEX: ReadonlyMap<string, number> = new Map(PHASES.map((p, i) => [p, i]));

const end = (f: FixtureResult) => Math.max(0, ...f.spans.map((s) => s.startMs + s.durationMs));

/**
 * Reports written before phases were placed on the run's clock have no spans: they are rebuilt
 * from the fixture's start and its phase timings, one after the other (close, not exact).
 */
export function withSpans(report: Report): FixtureResult[] {
  const t0 = Date.parse(report.startedAt);
  return report.fixtures.map((f) => {
    if (f.spans.length || !Object.keys(f.timings).length) return f;
    let at = Math.max(0, Date.parse(f.startedAt) - t0);
    const spans = PHASES.filter((p) => f.timings[p] !== undefined).map((phase) => {
      const span = { phase, startMs: Math.round(at), durationMs: f.timings[phase]! };
      at += span.durationMs;
      return span;
    });
    return { ...f, spans };
  });
}

/** Characters of logs and of patch text one fixture may carry when the page holds `totalFixtures`. */
export function budgetFor(totalFixtures: number): { logs: number; patch: number } {
  const n = Math.max(1, totalFixtures);
  return {
    logs: Math.max(BUDGET.minPerFixture, Math.min(BUDGET.maxPerFixture, Math.floor(BUDGET.logBytes / n))),
    patch: Math.max(BUDGET.minPerFixture, Math.min(64_000, Math.floor(BUDGET.patchBytes / n))),
  };
}

export function clientRun(run: HtmlRun, totalFixtures: number): ClientRun {
  const { logs: per, patch: patchMax } = budgetFor(totalFixtures);
  const { report } = run;
  const results = withSpans(report);
  const lanes = assignLanes(results);
  const fixtures = results.map((f, i): ClientFixture => {
    const extras = run.extras?.get(f.fixtureId);
    const streams = Math.max(
      1,
      (extras?.logs ?? []).reduce((a, l) => a + (l.stdout.text ? 1 : 0) + (l.stderr.text ? 1 : 0), 0),
    );
    const graded = [
      f.failToPass ? `failToPass ${f.failToPass.passed}/${f.failToPass.total}` : '',
      f.passToPass ? `passToPass ${f.passToPass.passed}/${f.passToPass.total}` : '',
    ]
      .filter(Boolean)
      .join(' · ');
    const patchText = extras?.patch ?? undefined;
    return {
      id: f.fixtureId,
      ...(f.title ? { title: f.title } : {}),
      verdict: f.verdict,
      reason: f.reason,
      ms: f.durationMs,
      lane: lanes[i]!,
      spans: f.spans.map((s) => [PHASE_INDEX.get(s.phase) ?? 0, s.startMs, s.durationMs]),
      timings: f.timings,
      red: phase(f.red),
      green: phase(f.green),
      patch: f.patch ? { ...f.patch, ...(patchText !== undefined ? { text: clip(patchText, patchMax) } : {}) } : null,
      ...(graded ? { graded } : {}),
      ...(f.error ? { error: `${f.error.code}: ${f.error.message}` } : {}),
      ...(f.attempts && f.attempts > 1 ? { attempts: f.attempts } : {}),
      ...(extras
        ? {
            logs: extras.logs.map(({ stdout, stderr, ...l }) => ({
              ...l,
              out: clip(stdout.text, Math.floor(per / streams)),
              err: clip(stderr.text, Math.floor(per / streams)),
              outBytes: stdout.bytes,
              errBytes: stderr.bytes,
            })),
          }
        : {}),
    };
  });
  return {
    runId: report.runId,
    subject: report.subject,
    mode: report.mode,
    backend: report.backend,
    durationMs: report.durationMs,
    lanes: lanes.reduce((a, l) => Math.max(a, l + 1), 1),
    transcript: Boolean(run.extras),
    fixtures,
  };
}

/** JSON inside <script type="application/json">: nothing in it can close the element or break JS. */
export function embedJson(value: unknown): string {
  const escapes: Record<string, string> = { '<': '\\u003c', '\u2028': '\\u2028', '\u2029': '\\u2029' };
  return JSON.stringify(value).replace(/[<\u2028\u2029]/g, (c) => escapes[c]!);
}
