import { describe, expect, test } from 'vitest';
import { checkBaseline, scoreAgent } from '../../harness/scoring/agent.js';
import { broken, declared, patch, phase, timedOut } from '../helpers/phases.js';

// t::fix is the bug's test, t::keep must keep passing.
const tests = declared(['t::fix'], ['t::keep']);
const baseline = phase({ 't::fix': 'failed', 't::keep': 'passed' });
const fixed = phase({ 't::fix': 'passed', 't::keep': 'passed' });
const ids = (n: number, p: string) => Array.from({ length: n }, (_, i) => `t::${p}${i + 1}`);

describe('checkBaseline: is the unpatched fixture a fair question?', () => {
  test('a fixture whose failToPass fails and passToPass passes is fair (null)', () => {
    expect(checkBaseline(tests, baseline)).toBeNull();
  });

  test('a baseline that timed out or is broken is named as such', () => {
    expect(checkBaseline(tests, timedOut())).toBe('the RED baseline timed out');
    expect(checkBaseline(tests, broken('collection error in tests/test_calc.py', 'exit code 2'))).toBe(
      'the RED baseline is unusable: collection error in tests/test_calc.py; exit code 2',
    );
  });

  test('failToPass tests that already pass are named (four at most, the rest counted)', () => {
    expect(checkBaseline(tests, fixed)).toBe('failToPass tests already pass without any patch: t::fix');
    const six = ids(6, 'f');
    const r = checkBaseline(declared(six), phase(Object.fromEntries(six.map((id) => [id, 'passed']))));
    expect(r).toBe('failToPass tests already pass without any patch: t::f1, t::f2, t::f3, t::f4 and 2 more');
  });

  test('passToPass tests that fail without any patch are named', () => {
    const r = checkBaseline(
      declared(['t::fix'], ['t::keep', 't::also']),
      phase({ 't::fix': 'failed', 't::keep': 'error', 't::also': 'skipped' }),
    );
    expect(r).toBe('passToPass tests do not pass without any patch: t::keep, t::also');
  });

  test('a declared test the runner never reported is named as such, with the closest reported ids and what to run', () => {
    const r = checkBaseline(
      declared(['t::fix'], ['t::keep', 't::kep']),
      phase({ 't::fix': 'failed', 't::keep': 'passed', 't::other': 'passed' }),
    );
    expect(r).toBe(
      'declared tests never reported by the runner: t::kep (closest reported to t::kep: t::keep, t::fix, t::other); run `redgreen selfcheck <id> --write` to record the ids the runner reports',
    );
  });

  test('an already-passing failToPass is reported before a failing passToPass', () => {
    expect(checkBaseline(tests, phase({ 't::fix': 'passed', 't::keep': 'failed' }))).toMatch(/^failToPass tests already pass/);
  });
});

describe('scoreAgent: before any test runs', () => {
  const none = { failToPass: null, passToPass: null, flakyDependence: [] };

  test("an unsafe patch is rejected, with the guard's reason, and never graded", () => {
    expect(scoreAgent(tests, patch({ status: 'unsafe', reason: 'writes outside the workdir: ../etc/passwd' }), fixed)).toEqual({
      ...none,
      verdict: 'rejected',
      reason: 'unsafe patch: writes outside the workdir: ../etc/passwd',
    });
  });

  test('a patch that did not apply is patch_error, with its status in words', () => {
    expect(scoreAgent(tests, patch({ status: 'failed', reason: 'hunk #2 FAILED' }), null)).toEqual({
      ...none,
      verdict: 'patch_error',
      reason: 'failed: hunk #2 FAILED',
    });
    expect(scoreAgent(tests, patch({ status: 'not_a_diff', reason: 'prose, no hunk' }), null).reason).toBe('not a diff: prose, no hunk');
    expect(scoreAgent(tests, patch({ status: 'missing' }), null)).toEqual({ ...none, verdict: 'patch_error', reason: 'missing: ' });
  });

  test("an applied patch with no GREEN run is infra_error, not the model's fault", () => {
    expect(scoreAgent(tests, patch(), null)).toEqual({ ...none, verdict: 'infra_error', reason: 'the GREEN run did not happen' });
  });

  test('tests that time out after the patch are timeout', () => {
    expect(scoreAgent(tests, patch(), timedOut())).toEqual({ ...none, verdict: 'timeout', reason: 'the tests timed out after the patch' });
  });
});

describe('scoreAgent: resolved', () => {
  test('every declared test passing is resolved, with the F2P/P2P counts', () => {
    const r = scoreAgent(
      declared(['a', 'b'], ['c', 'd', 'e']),
      patch(),
      phase({ a: 'passed', b: 'passed', c: 'passed', d: 'passed', e: 'passed' }),
    );
    expect(r).toEqual({
      verdict: 'resolved',
      reason: 'failToPass 2/2, passToPass 3/3',
      failToPass: { passed: 2, total: 2 },
      passToPass: { passed: 3, total: 3 },
      flakyDependence: [],
    });
  });

  test('only declared tests count: an undeclared failing test does not stop resolved', () => {
    expect(scoreAgent(tests, patch(), phase({ 't::fix': 'passed', 't::keep': 'passed', 't::unrelated': 'failed' })).verdict).toBe(
      'resolved',
    );
  });

  test('a resolve that depends on flaky declared tests says so; undeclared flaky tests are left out', () => {
    const r = scoreAgent(tests, patch(), phase({ 't::fix': 'passed', 't::keep': 'passed' }, { flaky: ['t::keep', 't::other'] }));
    expect(r.verdict).toBe('resolved');
    expect(r.flakyDependence).toEqual(['t::keep']);
    expect(r.reason).toBe('failToPass 1/1, passToPass 1/1 — depends on flaky test(s): t::keep');
  });

  test('ignored edits to protected files and a fuzzy apply are in the reason', () => {
    const r = scoreAgent(tests, patch({ tampered: ['tests/test_calc.py'], fuzzy: true }), fixed);
    expect(r.verdict).toBe('resolved');
    expect(r.reason).toBe(
      'failToPass 1/1, passToPass 1/1 — edits to protected files ignored: tests/test_calc.py — applied with a fuzzy fallback',
    );
  });
});

describe('scoreAgent: unresolved', () => {
  test('a failToPass test still failing is unresolved, with the counts and the failing test', () => {
    const r = scoreAgent(tests, patch(), baseline);
    expect(r).toEqual({
      verdict: 'unresolved',
      reason: 'failToPass 0/1, passToPass 1/1; failing: t::fix',
      failToPass: { passed: 0, total: 1 },
      passToPass: { passed: 1, total: 1 },
      flakyDependence: [],
    });
  });

  test('a broken passToPass test and a missing one both count as failing', () => {
    const r = scoreAgent(declared(['f1', 'f2'], ['p1', 'p2']), patch(), phase({ f1: 'passed', f2: 'passed', p1: 'failed' }));
    expect(r.verdict).toBe('unresolved');
    expect(r.passToPass).toEqual({ passed: 0, total: 2 });
    expect(r.reason).toBe('failToPass 2/2, passToPass 0/2; failing: p1, p2');
  });

  test('an empty patch (the do-nothing baseline) is unresolved and says it was empty', () => {
    expect(scoreAgent(tests, patch({ files: [] }), baseline).reason).toBe('empty patch; failToPass 0/1, passToPass 1/1; failing: t::fix');
  });

  test('the failing list names four tests and counts the rest; notes follow it', () => {
    const f2p = ids(6, 'f');
    const r = scoreAgent(declared(f2p), patch({ tampered: ['tests/conftest.py'] }), phase({ 't::f1': 'passed' }, { flaky: ['t::f1'] }));
    expect(r.reason).toBe(
      'failToPass 1/6, passToPass 0/0; failing: t::f2, t::f3, t::f4, t::f5 and 1 more — depends on flaky test(s): t::f1 — edits to protected files ignored: tests/conftest.py',
    );
  });
});
