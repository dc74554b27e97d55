import type { TestReport } from './types.js';

export type PhaseState = 'pass' | 'fail' | 'broken' | 'timeout';

export interface PhaseCheck {
  state: PhaseState;
  /** Why the phase is not simply what its tests say. */
  problems: string[];
}

/**
 * Cross-checks a runner's report with its exit code: a non-zero exit with no failure parsed is
 * not a pass, and a suite that ran no test is not a pass either. `disagreements` are where a
 * second signal (results/signals.ts) contradicts the report: such a phase is broken whatever its
 * tests say, so a pass it shows is never taken at face value.
 */
export function checkPhase(report: TestReport, exitCode: number, timedOut: boolean, disagreements: readonly string[] = []): PhaseCheck {
  if (timedOut) return { state: 'timeout', problems: ['the test command timed out'] };
  const problems: string[] = [];
  if (report.note) problems.push(report.note);
  const { failed, errors, passed, total } = report.counts;
  if (total === 0 || (passed === 0 && failed === 0 && errors === 0)) {
    problems.push(`the suite ran no test (exit code ${exitCode})`);
    return { state: 'broken', problems };
  }
  if (disagreements.length) return { state: 'broken', problems: [...problems, ...disagreements] };
  if (failed + errors > 0) {
    if (exitCode === 0) problems.push('the report has failures but the command exited 0');
    return { state: 'fail', problems };
  }
  if (exitCode !== 0) {
    problems.push(`exit code ${exitCode} with no failing test in the report`);
    return { state: 'broken', problems };
  }
  return { state: 'pass', problems };
}
