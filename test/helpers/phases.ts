import type { PatchSummary, TestPhase } from '../../harness/pipeline/result.js';

/**
 * Test phases and patch summaries for the scoring rules, built from what the rules read: the
 * phase's state, its tests' statuses and its flaky list; the patch's status, files and tampering.
 * Counts are derived from the statuses so a phase is always self-consistent.
 */
export type Status = TestPhase['tests'][number]['status'];

export function phase(statuses: Record<string, Status>, extra: Partial<TestPhase> = {}): TestPhase {
  const tests = Object.entries(statuses).map(([id, status]) => ({ id, status }));
  const count = (s: Status) => tests.filter((t) => t.status === s).length;
  const counts = {
    passed: count('passed'),
    failed: count('failed'),
    errors: count('error'),
    skipped: count('skipped'),
    total: tests.length,
  };
  const failing = counts.failed + counts.errors > 0;
  return {
    state: failing ? 'fail' : 'pass',
    exitCode: failing ? 1 : 0,
    durationMs: 100,
    source: 'junit',
    counts,
    tests,
    problems: [],
    flaky: [],
    runs: 1,
    ...extra,
  };
}

/** A phase that timed out: no report, the process tree killed. */
export const timedOut = (): TestPhase => phase({}, { state: 'timeout', exitCode: 124 });

/** A phase whose output could not be trusted as a test result. */
export const broken = (...problems: string[]): TestPhase => phase({}, { state: 'broken', exitCode: 2, problems });

export function patch(extra: Partial<PatchSummary> = {}): PatchSummary {
  return { source: 'oracle', sha256: 'ab'.repeat(32), status: 'applied', files: ['src/calc.py'], tampered: [], fuzzy: false, ...extra };
}

/** The declared lists of a manifest. */
export const declared = (failToPass: string[], passToPass: string[] = []) => ({ failToPass, passToPass });
