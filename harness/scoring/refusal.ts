import type { Manifest } from '../fixtures/manifest.js';
import type { PatchSummary } from '../patch/summary.js';
import type { AgentVerdict } from './verdicts.js';

export interface Refusal {
  verdict: AgentVerdict;
  reason: string;
  failToPass: { passed: number; total: number } | null;
  passToPass: null;
}

/**
 * Run mode: a patch that cannot change the outcome is graded before any sandbox, setup or RED run.
 * `patch` is the inspected summary, with the staging copy's answer when the patch was tried there.
 * An empty patch is unresolved (the baseline makes failToPass fail by definition) unless the
 * empty patch is the point (`run --agent nop` measures that the fixtures stay RED).
 */
export function refuseBeforeRun(tests: Manifest['tests'], patch: PatchSummary, options: { gradeEmpty: boolean }): Refusal | null {
  const none = { failToPass: null, passToPass: null } as const;
  if (patch.status === 'unsafe') return { ...none, verdict: 'rejected', reason: `unsafe patch: ${patch.reason ?? ''}` };
  if (patch.status === 'none' && patch.reason === 'empty patch') {
    if (options.gradeEmpty) return null;
    return {
      verdict: 'unresolved',
      reason: `empty patch: nothing changed, so nothing was run; failToPass 0/${tests.failToPass.length}`,
      failToPass: { passed: 0, total: tests.failToPass.length },
      passToPass: null,
    };
  }
  if (patch.status === 'none' || patch.status === 'applied') return null;
  return {
    ...none,
    verdict: 'patch_error',
    reason: `${patch.status.replace(/_/g, ' ')}: ${patch.reason ?? ''} (refused before any sandbox)`,
  };
}
