import type { Manifest } from '../fixtures/manifest.js';
import { describeAudit } from '../patch/audit.js';
import type { PatchSummary } from '../patch/summary.js';
import type { TestPhase } from '../results/phase.js';
import { observeTransitions, statusIn } from './observe.js';
import { neverReported } from './unreported.js';
import type { SelfcheckVerdict } from './verdicts.js';

export interface Scored {
  verdict: SelfcheckVerdict;
  reason: string;
}

const list = (ids: string[], max = 5) => ids.slice(0, max).join(', ') + (ids.length > max ? ` and ${ids.length - max} more` : '');

/**
 * Selfcheck: the buggy fixture must be RED, the oracle must apply and turn it GREEN, and the
 * tests the manifest declares must move the way it says.
 */
export function scoreSelfcheck(tests: Manifest['tests'], red: TestPhase, patch: PatchSummary, green: TestPhase | null): Scored {
  if (red.state === 'timeout') return { verdict: 'timeout', reason: 'the RED run timed out' };
  if (red.state === 'pass') return { verdict: 'not_red', reason: `every test passes before the patch (${red.counts.passed} passed)` };
  if (red.state === 'broken') return { verdict: 'not_red', reason: `the RED run is not a usable failure: ${red.problems.join('; ')}` };
  const declaredF2P = tests.failToPass.filter((id) => statusIn(red, id) === 'passed');
  if (declaredF2P.length) return { verdict: 'not_red', reason: `failToPass tests already pass before the patch: ${list(declaredF2P)}` };

  if (patch.status !== 'applied') {
    return { verdict: 'patch_error', reason: `${patch.status.replace(/_/g, ' ')}: ${patch.reason ?? 'the oracle did not apply'}` };
  }
  if (!green) return { verdict: 'patch_error', reason: 'no GREEN run' };
  if (green.state === 'timeout') return { verdict: 'timeout', reason: 'the GREEN run timed out' };
  if (red.flaky.length || green.flaky.length) {
    return { verdict: 'flaky', reason: `tests changed status between repetitions: ${list([...new Set([...red.flaky, ...green.flaky])])}` };
  }
  if (green.state !== 'pass') {
    const bad = green.tests.filter((t) => t.status === 'failed' || t.status === 'error').map((t) => t.id);
    return {
      verdict: 'not_green',
      reason: bad.length
        ? `still failing after the oracle: ${list(bad)}${green.limit ? ` — ${green.limit.message}` : ''}`
        : `the GREEN run is not a pass: ${green.problems.join('; ')}`,
    };
  }
  const unreported = neverReported([...tests.failToPass, ...tests.passToPass], red, green);
  if (unreported) return { verdict: 'not_green', reason: unreported };
  const notGreen = [...tests.failToPass, ...tests.passToPass].filter((id) => statusIn(green, id) !== 'passed');
  if (notGreen.length)
    return { verdict: 'not_green', reason: `declared tests not passing after the oracle (missing counts as failed): ${list(notGreen)}` };
  const brokenP2P = tests.passToPass.filter((id) => statusIn(red, id) !== 'passed');
  if (brokenP2P.length) return { verdict: 'not_red', reason: `passToPass tests do not pass before the patch: ${list(brokenP2P)}` };
  const observed = observeTransitions(red, green);
  if (!observed.failToPass.length) return { verdict: 'not_red', reason: 'no test goes from failing to passing' };
  const tampered = patch.tampered.length ? ` (the oracle edits protected files, not applied: ${list(patch.tampered)})` : '';
  // The author's own oracle is trusted, but a reviewer should still see what an agent would be flagged for.
  const audit = patch.audit?.length ? ` (the oracle reaches into test-framework internals: ${describeAudit(patch.audit)})` : '';
  return {
    verdict: 'valid',
    reason: `${observed.failToPass.length} fail→pass, ${observed.passToPass.length} pass→pass${tampered}${audit}`,
  };
}
