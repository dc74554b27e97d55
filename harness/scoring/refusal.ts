import type { Manifest } from '../fixtures/manifest.js';
import type { PatchSummary } from '../patch/summary.js';
import { scoreAgent, type AgentScore } from './agent.js';

/**
 * Run mode: a patch that cannot change the outcome is graded before any sandbox, setup or RED run.
 * `patch` is the inspected summary, with the staging copy's answer when the patch was tried there.
 * An empty patch is unresolved (the baseline makes failToPass fail by definition) unless the
 * empty patch is the point (`run --agent nop` measures that the fixtures stay RED); any other
 * patch that will not be applied gets scoreAgent's own verdict for it.
 */
export function refuseBeforeRun(tests: Manifest['tests'], patch: PatchSummary, options: { gradeEmpty: boolean }): AgentScore | null {
  if (patch.status === 'none' && patch.reason === 'empty patch') {
    if (options.gradeEmpty) return null;
    return {
      verdict: 'unresolved',
      reason: `empty patch: nothing changed, so nothing was run; failToPass 0/${tests.failToPass.length}`,
      failToPass: { passed: 0, total: tests.failToPass.length },
      passToPass: null,
      flakyDependence: [],
    };
  }
  if (patch.status === 'none' || patch.status === 'applied') return null;
  const refused = scoreAgent(tests, patch, null);
  return refused.verdict === 'patch_error' ? { ...refused, reason: `${refused.reason} (refused before any sandbox)` } : refused;
}
