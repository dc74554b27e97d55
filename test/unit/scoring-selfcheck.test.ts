import { describe, expect, test } from 'vitest';
import { observeTransitions, statusIn } from '../../harness/scoring/observe.js';
import { scoreSelfcheck } from '../../harness/scoring/selfcheck.js';
import { neverReported } from '../../harness/scoring/unreported.js';
import { broken, declared, patch, phase, timedOut } from '../helpers/phases.js';

// A well-formed fixture: t::fix is the bug's test (RED fails, GREEN passes), t::keep passes throughout.
const tests = declared(['t::fix'], ['t::keep']);
const red = phase({ 't::fix': 'failed', 't::keep': 'passed' });
const green = phase({ 't::fix': 'passed', 't::keep': 'passed' });

describe('scoreSelfcheck: the RED run is judged first', () => {
  test('a RED timeout is timeout, whatever the patch', () => {
    expect(scoreSelfcheck(tests, timedOut(), patch({ status: 'failed' }), null)).toEqual({
      verdict: 'timeout',
      reason: 'the RED run timed out',
    });
  });

  test('nothing failing before the patch is not_red, with the count of passing tests', () => {
    const allPass = phase({ 't::fix': 'passed', 't::keep': 'passed', 't::other': 'passed' });
    expect(scoreSelfcheck(tests, allPass, patch(), green)).toEqual({
      verdict: 'not_red',
      reason: 'every test passes before the patch (3 passed)',
    });
  });

  test('a broken RED run is not_red, with each problem named', () => {
    const r = scoreSelfcheck(tests, broken('no test ran', 'exit code 5'), patch(), green);
    expect(r).toEqual({ verdict: 'not_red', reason: 'the RED run is not a usable failure: no test ran; exit code 5' });
  });

  test('a declared failToPass test that already passes is not_red, even when other tests fail', () => {
    const r = scoreSelfcheck(tests, phase({ 't::fix': 'passed', 't::keep': 'passed', 't::unrelated': 'failed' }), patch(), green);
    expect(r).toEqual({ verdict: 'not_red', reason: 'failToPass tests already pass before the patch: t::fix' });
  });

  test('long lists name five tests and count the rest', () => {
    const ids = ['a', 'b', 'c', 'd', 'e', 'f', 'g'].map((x) => `t::${x}`);
    const r = scoreSelfcheck(
      declared(ids),
      phase({ ...Object.fromEntries(ids.map((id) => [id, 'passed'])), 't::x': 'failed' }),
      patch(),
      green,
    );
    expect(r.reason).toBe('failToPass tests already pass before the patch: t::a, t::b, t::c, t::d, t::e and 2 more');
  });
});

describe('scoreSelfcheck: the oracle and the GREEN run', () => {
  test('an oracle that did not apply is patch_error, with its status in words and its reason', () => {
    expect(scoreSelfcheck(tests, red, patch({ status: 'failed', reason: 'hunk #1 FAILED at 3' }), null)).toEqual({
      verdict: 'patch_error',
      reason: 'failed: hunk #1 FAILED at 3',
    });
    expect(scoreSelfcheck(tests, red, patch({ status: 'not_a_diff', reason: 'no hunk' }), null).reason).toBe('not a diff: no hunk');
  });

  test('without a reason of its own, patch_error says the oracle did not apply', () => {
    expect(scoreSelfcheck(tests, red, patch({ status: 'already_applied' }), null)).toEqual({
      verdict: 'patch_error',
      reason: 'already applied: the oracle did not apply',
    });
  });

  test('an applied oracle with no GREEN run is patch_error', () => {
    expect(scoreSelfcheck(tests, red, patch(), null)).toEqual({ verdict: 'patch_error', reason: 'no GREEN run' });
  });

  test('a GREEN timeout is timeout', () => {
    expect(scoreSelfcheck(tests, red, patch(), timedOut())).toEqual({ verdict: 'timeout', reason: 'the GREEN run timed out' });
  });

  test('a test that changed status between repetitions makes it flaky, each test named once', () => {
    const flakyRed = phase({ 't::fix': 'failed', 't::keep': 'passed' }, { flaky: ['t::keep'] });
    const flakyGreen = phase({ 't::fix': 'passed', 't::keep': 'passed' }, { flaky: ['t::keep', 't::x'] });
    const r = scoreSelfcheck(tests, flakyRed, patch(), flakyGreen);
    expect(r).toEqual({ verdict: 'flaky', reason: 'tests changed status between repetitions: t::keep, t::x' });
  });

  test('flakiness wins over a failing GREEN run: the failure may be the flake', () => {
    expect(scoreSelfcheck(tests, red, patch(), phase({ 't::fix': 'failed' }, { flaky: ['t::fix'] })).verdict).toBe('flaky');
  });

  test('tests failing or erroring after the oracle are not_green, each named', () => {
    const r = scoreSelfcheck(tests, red, patch(), phase({ 't::fix': 'failed', 't::keep': 'passed', 't::boom': 'error' }));
    expect(r).toEqual({ verdict: 'not_green', reason: 'still failing after the oracle: t::fix, t::boom' });
  });

  test('a GREEN run that is not a pass with no failing test is not_green, with its problems', () => {
    const r = scoreSelfcheck(tests, red, patch(), broken('exit code 1 but no failure was parsed'));
    expect(r).toEqual({ verdict: 'not_green', reason: 'the GREEN run is not a pass: exit code 1 but no failure was parsed' });
  });

  test('a declared test missing from (or skipped in) the GREEN report counts as failed: not_green', () => {
    const r = scoreSelfcheck(tests, red, patch(), phase({ 't::keep': 'skipped', 't::other': 'passed' }));
    expect(r).toEqual({
      verdict: 'not_green',
      reason: 'declared tests not passing after the oracle (missing counts as failed): t::fix, t::keep',
    });
  });

  test('a declared passToPass test that fails before the patch is not_red', () => {
    const r = scoreSelfcheck(tests, phase({ 't::fix': 'failed', 't::keep': 'failed' }), patch(), green);
    expect(r).toEqual({ verdict: 'not_red', reason: 'passToPass tests do not pass before the patch: t::keep' });
  });

  test('GREEN passing with no test going from failing to passing is not_red', () => {
    const r = scoreSelfcheck(
      declared([]),
      phase({ 't::a': 'failed', 't::b': 'passed' }),
      patch(),
      phase({ 't::a': 'skipped', 't::b': 'passed' }),
    );
    expect(r).toEqual({ verdict: 'not_red', reason: 'no test goes from failing to passing' });
  });
});

describe('scoreSelfcheck: valid', () => {
  test('valid counts the observed transitions, including undeclared and new tests', () => {
    const before = phase({ 't::fix': 'failed', 't::err': 'error', 't::keep': 'passed' });
    const after = phase({ 't::fix': 'passed', 't::err': 'passed', 't::keep': 'passed', 't::new': 'passed' });
    expect(scoreSelfcheck(tests, before, patch(), after)).toEqual({ verdict: 'valid', reason: '3 fail→pass, 1 pass→pass' });
  });

  test('an oracle that edits protected files is still valid, and the reason says those edits were not applied', () => {
    const r = scoreSelfcheck(tests, red, patch({ tampered: ['tests/test_calc.py'] }), green);
    expect(r).toEqual({
      verdict: 'valid',
      reason: '1 fail→pass, 1 pass→pass (the oracle edits protected files, not applied: tests/test_calc.py)',
    });
  });
});

describe('observeTransitions and statusIn', () => {
  test('failing, erroring and absent-before tests that pass after are failToPass; passing ones are passToPass', () => {
    const before = phase({ a: 'failed', b: 'error', c: 'passed', d: 'skipped', e: 'passed' });
    const after = phase({ a: 'passed', b: 'passed', c: 'passed', d: 'passed', e: 'failed', f: 'passed' });
    // d was skipped (neither failing nor passing) and e broke: neither list has them.
    expect(observeTransitions(before, after)).toEqual({ failToPass: ['a', 'b', 'f'], passToPass: ['c'] });
  });

  test('a test missing from a report has the status "missing"', () => {
    expect(statusIn(red, 't::fix')).toBe('failed');
    expect(statusIn(red, 't::nowhere')).toBe('missing');
  });
});

describe('declared ids the runner never reported', () => {
  test('selfcheck says so instead of "failing", with the closest ids', () => {
    const red = { ...phase({ 'test_calc.py::test_add': 'failed', 'test_calc.py::test_zero': 'passed' }), state: 'fail' as const };
    const green = phase({ 'test_calc.py::test_add': 'passed', 'test_calc.py::test_zero': 'passed' });
    const tests = { failToPass: ['test_calc.py::test_ad'], passToPass: ['test_calc.py::test_zero'] };
    const r = scoreSelfcheck(tests, red, patch(), green);
    expect(r.verdict).toBe('not_green');
    expect(r.reason).toMatch(
      /^declared tests never reported by the runner: test_calc\.py::test_ad \(closest reported to test_calc\.py::test_ad: test_calc\.py::test_add, /,
    );
    expect(r.reason).toContain('redgreen selfcheck <id> --write');
    // Nothing reported at all is the phase's problem, not the list's.
    expect(neverReported(['a'], phase({}))).toBeNull();
  });
});
