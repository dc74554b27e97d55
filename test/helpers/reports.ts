import type { FixtureResult } from '../../harness/pipeline/result.js';
import { summarize, type Report } from '../../harness/reporters/report.js';
import type { Verdict } from '../../harness/scoring/verdicts.js';

/** Synthetic reports for reporter tests: a verdict, a duration and GREEN statuses per fixture. */
export type Spec = { verdict: Verdict; ms?: number; green?: Record<string, 'passed' | 'failed'>; red?: number };
export function fixture(id: string, s: Spec): FixtureResult {
  const green = s.green ?? { 't::a': 'passed', 't::b': 'passed' };
  const tests = Object.entries(green).map(([tid, status]) => ({ id: tid, status }));
  return {
    fixtureId: id,
    verdict: s.verdict,
    reason: `${s.verdict} because of ${id}`,
    backend: 'local',
    sandboxId: null,
    startedAt: '2026-01-01T00:00:00.000Z',
    durationMs: s.ms ?? 1000,
    timings: { red: s.red ?? 400, green: (s.ms ?? 1000) - (s.red ?? 400) },
    spans: [],
    red: null,
    patch: null,
    observed: null,
    green: {
      state: 'pass',
      exitCode: 0,
      durationMs: 100,
      source: 'junit',
      counts: { passed: 0, failed: 0, errors: 0, skipped: 0, total: 0 },
      tests,
      problems: [],
      flaky: [],
      runs: 1,
    },
  };
}
export function report(runId: string, fixtures: Record<string, Spec>, mode: 'selfcheck' | 'run' = 'selfcheck'): Report {
  return reportOf(
    runId,
    Object.entries(fixtures).map(([id, s]) => fixture(id, s)),
    mode,
  );
}

/** A report around results made elsewhere. */
export function reportOf(runId: string, results: FixtureResult[], mode: 'selfcheck' | 'run' = 'selfcheck'): Report {
  return {
    schema: 'redgreen.report/1',
    runId,
    mode,
    subject: 'oracle',
    backend: 'local',
    concurrency: 2,
    repeat: 1,
    startedAt: '2026-01-01T00:00:00.000Z',
    finishedAt: '2026-01-01T00:00:05.000Z',
    durationMs: 5000,
    interrupted: false,
    unfinished: [],
    summary: summarize(results),
    fixtures: results,
  };
}
