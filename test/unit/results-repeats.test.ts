import { describe, expect, it } from 'vitest';
import { pytestAdapter } from '../../harness/results/pytest.js';
import { mergeRepeats, numberRepeats } from '../../harness/results/types.js';

describe('a test id seen twice is never merged silently', () => {
  it('numberRepeats: same-named tests are distinct, numbered in report order, and a failing one stays failed', () => {
    const tests = numberRepeats([
      { id: 'a.js::adds', status: 'failed' },
      { id: 'a.js::adds', status: 'passed' },
      { id: 'a.js::subtracts', status: 'passed' },
      { id: 'a.js::adds', status: 'passed' },
    ]);
    expect(tests.map((t) => [t.id, t.status])).toEqual([
      ['a.js::adds', 'failed'],
      ['a.js::adds [2]', 'passed'],
      ['a.js::subtracts', 'passed'],
      ['a.js::adds [3]', 'passed'],
    ]);
  });

  it('mergeRepeats: one test reported per phase keeps its worst status, in first-seen order', () => {
    expect(
      mergeRepeats([
        { id: 't::a', status: 'passed' },
        { id: 't::b', status: 'passed' },
        { id: 't::a', status: 'error', message: 'teardown' },
        { id: 't::a', status: 'passed' },
      ]),
    ).toEqual([
      { id: 't::a', status: 'error', message: 'teardown' },
      { id: 't::b', status: 'passed' },
    ]);
  });

  it('pytest: a test that passed and then broke in teardown (-rA lines, as pytest prints them) is an error, not a pass', () => {
    const stdout = 'PASSED test_t.py::test_a\nERROR test_t.py::test_a - RuntimeError: teardown broke\n';
    const report = pytestAdapter.parse({ report: null, stdout, stderr: '', exitCode: 1, workdir: '/w' });
    expect(report.tests).toEqual([{ id: 'test_t.py::test_a', status: 'error' }]);
    expect(report.counts).toMatchObject({ passed: 0, errors: 1, total: 1 });
  });
});
