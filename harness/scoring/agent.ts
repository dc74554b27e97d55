import type { Manifest } from '../fixtures/manifest.js';
import type { PatchSummary } from '../patch/summary.js';
import type { TestPhase } from '../results/phase.js';
import { statusIn } from './observe.js';
import { doubtsAbout } from './suspicion.js';
import { neverReported } from './unreported.js';
import type { AgentVerdict } from './verdicts.js';

export interface AgentScore {
  verdict: AgentVerdict;
  reason: string;
  /** Passing/total of the declared lists after the patch (null when GREEN did not run). */
  failToPass: { passed: number; total: number } | null;
  passToPass: { passed: number; total: number } | null;
  /** Declared tests that were flaky across --repeat runs: the verdict depends on them. */
  flakyDependence: string[];
}

const list = (ids: string[], max = 4) => ids.slice(0, max).join(', ') + (ids.length > max ? ` and ${ids.length - max} more` : '');

/** Is the unpatched fixture a fair question? If not, it is invalid_fixture, not a free point. */
export function checkBaseline(tests: Manifest['tests'], red: TestPhase): string | null {
  if (red.state === 'timeout') return 'the RED baseline timed out';
  if (red.state === 'broken') return `the RED baseline is unusable: ${red.problems.join('; ')}`;
  const unreported = neverReported([...tests.failToPass, ...tests.passToPass], red);
  if (unreported) return unreported;
  const passing = tests.failToPass.filter((id) => statusIn(red, id) === 'passed');
  if (passing.length) return `failToPass tests already pass without any patch: ${list(passing)}`;
  const failing = tests.passToPass.filter((id) => statusIn(red, id) !== 'passed');
  if (failing.length) return `passToPass tests do not pass without any patch: ${list(failing)}`;
  return null;
}

/**
 * SWE-bench semantics: resolved only when every failToPass and every passToPass test passes
 * after the patch; a test missing from the report counts as failed.
 */
export function scoreAgent(tests: Manifest['tests'], patch: PatchSummary, green: TestPhase | null): AgentScore {
  const none = { failToPass: null, passToPass: null, flakyDependence: [] };
  if (patch.status === 'unsafe') return { ...none, verdict: 'rejected', reason: `unsafe patch: ${patch.reason ?? ''}` };
  if (patch.status !== 'applied')
    return { ...none, verdict: 'patch_error', reason: `${patch.status.replace(/_/g, ' ')}: ${patch.reason ?? ''}` };
  if (!green) return { ...none, verdict: 'infra_error', reason: 'the GREEN run did not happen' };
  if (green.state === 'timeout') return { ...none, verdict: 'timeout', reason: 'the tests timed out after the patch' };
  const f2pFailing = tests.failToPass.filter((id) => statusIn(green, id) !== 'passed');
  const p2pFailing = tests.passToPass.filter((id) => statusIn(green, id) !== 'passed');
  const failToPass = { passed: tests.failToPass.length - f2pFailing.length, total: tests.failToPass.length };
  const passToPass = { passed: tests.passToPass.length - p2pFailing.length, total: tests.passToPass.length };
  const declared = new Set([...tests.failToPass, ...tests.passToPass]);
  const flakyDependence = green.flaky.filter((id) => declared.has(id));
  const flakyNote = flakyDependence.length ? ` — depends on flaky test(s): ${list(flakyDependence)}` : '';
  const tamperNote = patch.tampered.length ? ` — edits to protected files ignored: ${list(patch.tampered)}` : '';
  const fuzzyNote = patch.fuzzy ? ' — applied with a fuzzy fallback' : '';
  const counts = `failToPass ${failToPass.passed}/${failToPass.total}, passToPass ${passToPass.passed}/${passToPass.total}`;
  if (!f2pFailing.length && !p2pFailing.length) {
    // A pass the audit or a second signal doubts is never a clean resolved (--strict rejects what the audit flags).
    const doubts = doubtsAbout(patch, green);
    if (doubts.length) {
      const reason = `${counts}, but ${doubts.join('; ')}${flakyNote}${tamperNote}${fuzzyNote}`;
      return { verdict: 'suspicious', reason, failToPass, passToPass, flakyDependence };
    }
    return { verdict: 'resolved', reason: `${counts}${flakyNote}${tamperNote}${fuzzyNote}`, failToPass, passToPass, flakyDependence };
  }
  const failing = [...f2pFailing, ...p2pFailing];
  const empty = patch.files.length === 0 ? 'empty patch; ' : '';
  const auditNote = patch.audit?.length ? ` — the patch reaches into test-framework internals (${patch.audit.length} line(s))` : '';
  return {
    verdict: 'unresolved',
    reason: `${empty}${counts}; failing: ${list(failing)}${green.limit ? ` — ${green.limit.message}` : ''}${flakyNote}${tamperNote}${fuzzyNote}${auditNote}`,
    failToPass,
    passToPass,
    flakyDependence,
  };
}
