import { describeAudit, describeFinding } from '../patch/audit.js';
import type { PatchSummary } from '../patch/summary.js';
import type { TestPhase } from '../results/phase.js';

/**
 * Why a pass cannot be taken at face value: the patch reaches into test-framework internals (its
 * audit), or the GREEN run's signals disagree (the exit code, the harness's own record of the run
 * and the runner's report; results/check.ts marks such a phase broken).
 */
export function doubtsAbout(patch: PatchSummary, green: TestPhase): string[] {
  const doubts: string[] = [];
  if (patch.audit?.length) doubts.push(`the patch reaches into test-framework internals: ${describeAudit(patch.audit)}`);
  if (green.state === 'broken') doubts.push(`the test results disagree: ${green.problems.join('; ')}`);
  return doubts;
}

/** The audit's lines as every report shows them (`file:line [rule] text`). */
export function auditLines(patch: PatchSummary | null | undefined): string[] {
  return (patch?.audit ?? []).map(describeFinding);
}
