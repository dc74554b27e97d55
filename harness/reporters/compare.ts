import type { FixtureResult, TestPhase } from '../pipeline/result.js';
import { EXPECTED, type Verdict } from '../scoring/verdicts.js';
import type { Report } from './report.js';

/**
 * Timing noise: a fixture's time changed only when it moved by at least `ms` AND by a factor of
 * at least `ratio` (either way). Test runs of the same code routinely differ by tens of percent
 * and by a few hundred milliseconds under parallel load; both conditions together keep a
 * 20 ms → 40 ms blip and a 60.0 s → 60.4 s drift out, and flag 1 s → 3 s.
 */
export interface Noise {
  ms: number;
  ratio: number;
}
export const DEFAULT_NOISE: Noise = { ms: 500, ratio: 1.5 };

export interface VerdictChange {
  fixtureId: string;
  from: Verdict;
  to: Verdict;
  /** regression: was valid/resolved, is not; improvement: the other way; change: neither was. */
  kind: 'regression' | 'change' | 'improvement';
  reason: string;
}
export interface TestChange {
  fixtureId: string;
  phase: 'RED' | 'GREEN';
  testId: string;
  from: string;
  to: string;
}
export interface TimingChange {
  fixtureId: string;
  fromMs: number;
  toMs: number;
  /** The phase whose time moved the most. */
  phase: string | null;
}
export interface RunSide {
  runId: string;
  subject: string;
  mode: string;
  fixtures: number;
  expected: number;
  durationMs: number;
}
export interface Comparison {
  a: RunSide;
  b: RunSide;
  onlyInA: string[];
  onlyInB: string[];
  common: number;
  verdictChanges: VerdictChange[];
  testChanges: TestChange[];
  timingChanges: TimingChange[];
  noise: Noise;
  regressions: number;
}

const ok = (v: Verdict) => EXPECTED.has(v);
const side = (r: Report): RunSide => ({
  runId: r.runId,
  subject: r.subject,
  mode: r.mode,
  fixtures: r.fixtures.length,
  expected: r.summary.expected,
  durationMs: r.durationMs,
});
const RANK = { regression: 0, change: 1, improvement: 2 } as const;

function testChanges(id: string, phase: TestChange['phase'], a: TestPhase | null, b: TestPhase | null): TestChange[] {
  // A phase that ran on one side only is a verdict change already; listing each test would be noise.
  if (!a || !b) return [];
  const before = new Map(a.tests.map((t) => [t.id, t.status as string]));
  const after = new Map(b.tests.map((t) => [t.id, t.status as string]));
  const out: TestChange[] = [];
  for (const testId of new Set([...before.keys(), ...after.keys()])) {
    const from = before.get(testId) ?? 'absent';
    const to = after.get(testId) ?? 'absent';
    if (from !== to) out.push({ fixtureId: id, phase, testId, from, to });
  }
  return out;
}

function timingChange(a: FixtureResult, b: FixtureResult, noise: Noise): TimingChange | null {
  const [lo, hi] = [Math.min(a.durationMs, b.durationMs), Math.max(a.durationMs, b.durationMs)];
  if (hi - lo < noise.ms || hi < noise.ratio * Math.max(lo, 1)) return null;
  let phase: string | null = null;
  let most = 0;
  for (const p of new Set([...Object.keys(a.timings), ...Object.keys(b.timings)])) {
    const d = Math.abs((b.timings[p] ?? 0) - (a.timings[p] ?? 0));
    if (d > most) [most, phase] = [d, p];
  }
  return { fixtureId: a.fixtureId, fromMs: a.durationMs, toMs: b.durationMs, phase };
}

/** Run A (before) against run B (after): verdicts, test statuses and timings of the fixtures both have. */
export function compareReports(a: Report, b: Report, noise: Noise = DEFAULT_NOISE): Comparison {
  const inA = new Map(a.fixtures.map((f) => [f.fixtureId, f]));
  const inB = new Map(b.fixtures.map((f) => [f.fixtureId, f]));
  const verdictChanges: VerdictChange[] = [];
  const tests: TestChange[] = [];
  const timings: TimingChange[] = [];
  let common = 0;
  for (const [id, fa] of inA) {
    const fb = inB.get(id);
    if (!fb) continue;
    common++;
    if (fa.verdict !== fb.verdict) {
      const kind = ok(fa.verdict) ? 'regression' : ok(fb.verdict) ? 'improvement' : 'change';
      verdictChanges.push({ fixtureId: id, from: fa.verdict, to: fb.verdict, kind, reason: fb.reason });
    }
    tests.push(...testChanges(id, 'RED', fa.red, fb.red), ...testChanges(id, 'GREEN', fa.green, fb.green));
    const t = timingChange(fa, fb, noise);
    if (t) timings.push(t);
  }
  verdictChanges.sort((x, y) => RANK[x.kind] - RANK[y.kind]);
  timings.sort((x, y) => Math.abs(y.toMs - y.fromMs) - Math.abs(x.toMs - x.fromMs));
  return {
    a: side(a),
    b: side(b),
    onlyInA: [...inA.keys()].filter((id) => !inB.has(id)),
    onlyInB: [...inB.keys()].filter((id) => !inA.has(id)),
    common,
    verdictChanges,
    testChanges: tests,
    timingChanges: timings,
    noise,
    regressions: verdictChanges.filter((c) => c.kind === 'regression').length,
  };
}

const secs = (ms: number) => `${(ms / 1000).toFixed(2)}s`;
const MARK = { regression: '✘ regression ', change: '~ change     ', improvement: '✔ improvement' } as const;

function capped<T>(title: string, items: readonly T[], line: (x: T) => string, max: number): string[] {
  if (!items.length) return [`${title}: none`];
  const out = [`${title} (${items.length}):`, ...items.slice(0, max).map((x) => `  ${line(x)}`)];
  if (items.length > max) out.push(`  … ${items.length - max} more (--json lists them all)`);
  return out;
}

const describeSide = (s: RunSide) =>
  `${s.runId} (${s.mode} of ${s.subject}: ${s.expected}/${s.fixtures} ${s.mode === 'selfcheck' ? 'valid' : 'resolved'})`;

/** The comparison for a terminal: regressions first, then other verdict changes, tests, timings. */
export function renderComparison(c: Comparison, max = 50): string {
  const lines = [`A: ${describeSide(c.a)}`, `B: ${describeSide(c.b)}`];
  if (c.onlyInA.length || c.onlyInB.length) {
    lines.push(
      `fixture sets differ: ${c.common} in both (compared below)` +
        `${c.onlyInA.length ? `; only in A (${c.onlyInA.length}): ${c.onlyInA.slice(0, 20).join(', ')}${c.onlyInA.length > 20 ? ', …' : ''}` : ''}` +
        `${c.onlyInB.length ? `; only in B (${c.onlyInB.length}): ${c.onlyInB.slice(0, 20).join(', ')}${c.onlyInB.length > 20 ? ', …' : ''}` : ''}`,
    );
  }
  const width = Math.max(8, ...c.verdictChanges.slice(0, max).map((v) => v.fixtureId.length));
  lines.push(
    '',
    ...capped(
      'verdict changes',
      c.verdictChanges,
      (v) => `${MARK[v.kind]}  ${v.fixtureId.padEnd(width)}  ${v.from} → ${v.to}  ${v.reason}`,
      max,
    ),
    '',
    ...capped('test status changes', c.testChanges, (t) => `${t.fixtureId}  ${t.phase}  ${t.testId}  ${t.from} → ${t.to}`, max),
    '',
    ...capped(
      `timing changes beyond noise (at least ${c.noise.ms} ms and ${c.noise.ratio}×)`,
      c.timingChanges,
      (t) =>
        `${t.fixtureId}  ${secs(t.fromMs)} → ${secs(t.toMs)} (${t.toMs > t.fromMs ? '+' : '−'}${secs(Math.abs(t.toMs - t.fromMs))}${t.phase ? `, mostly ${t.phase}` : ''})`,
      max,
    ),
    '',
    `run time ${secs(c.a.durationMs)} → ${secs(c.b.durationMs)}`,
    c.regressions ? `✘ ${c.regressions} regression(s): fixtures that were valid/resolved in A are not in B` : '✔ no regression',
  );
  return `${lines.join('\n')}\n`;
}
