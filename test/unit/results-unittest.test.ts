import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { parseUnittestVerbose, unittestAdapter } from '../../harness/results/unittest.js';
import type { ParseInput } from '../../harness/results/types.js';

// Captured by test/helpers/capture-runner-output.sh: `python3 -m unittest -v` on Python 3.11.
const data = (f: string) => readFile(new URL(`../data/${f}`, import.meta.url), 'utf8');

const statuses = (tests: { id: string; status: string }[]) => Object.fromEntries(tests.map((t) => [t.id, t.status]));

const EXPECTED = {
  'test_inv.TestBroken.setUpClass': 'error',
  'test_inv.TestInv.test_doc': 'failed',
  'test_inv.TestInv.test_error': 'error',
  'test_inv.TestInv.test_ok': 'passed',
  'test_inv.TestInv.test_prints': 'passed',
  'test_inv.TestInv.test_skip': 'skipped',
  'test_inv.TestInv.test_sub': 'failed',
  'test_inv.TestInv.test_xfail': 'skipped',
  'test_inv.TestInv.test_z_after_sub': 'passed',
};

async function input(): Promise<ParseInput> {
  return {
    report: null,
    stdout: await data('unittest/stdout.txt'),
    stderr: await data('unittest/stderr.txt'),
    exitCode: Number(await data('unittest/exit-code')),
    workdir: '/WORK/unittest',
  };
}

describe('unittest adapter', () => {
  it('runs the command as given (unittest has no report option)', () => {
    expect(unittestAdapter.prepare({ command: 'python3 -m unittest -v', workdir: '/w', scratchDir: '/s', env: {} })).toEqual({
      command: 'python3 -m unittest -v',
      env: {},
    });
  });

  it('reads every test of the -v output, docstring, skip, subtest and setUpClass included', async () => {
    const report = unittestAdapter.parse(await input());
    expect(report.source).toBe('stdout');
    expect(report.note).toBeUndefined();
    expect(statuses(report.tests)).toEqual(EXPECTED);
    expect(report.counts).toEqual({ passed: 3, failed: 2, errors: 2, skipped: 2, total: 9 });
  });

  it('finds the verdict after output the test printed between " ... " and it', async () => {
    const stderr = await data('unittest/stderr.txt');
    expect(stderr).toContain('test_prints (test_inv.TestInv.test_prints) ... stderr line from test\nok\n');
    expect(statuses(parseUnittestVerbose(stderr))['test_inv.TestInv.test_prints']).toBe('passed');
  });

  it('reads the same statuses when stdout and stderr are merged (2>&1)', async () => {
    const merged = await data('unittest-combined/stdout.txt');
    expect(merged).toContain('... stdout line from test\nstderr line from test\nok\n');
    expect(statuses(unittestAdapter.parse({ report: null, stdout: merged, stderr: '', exitCode: 1, workdir: '/w' }).tests)).toEqual(
      EXPECTED,
    );
  });

  it('reads the pre-3.11 form, where the parenthesis holds only the class', () => {
    const text = 'test_a (pkg.mod.K) ... ok\ntest_b (pkg.mod.K) ... FAIL\ntest_c (pkg.mod.K) ... skipped "it\'s off"\n';
    expect(statuses(parseUnittestVerbose(text))).toEqual({
      'pkg.mod.K.test_a': 'passed',
      'pkg.mod.K.test_b': 'failed',
      'pkg.mod.K.test_c': 'skipped',
    });
  });

  it('counts an unexpected success as a failure', () => {
    expect(parseUnittestVerbose('test_a (m.K.test_a) ... unexpected success\n')).toEqual([{ id: 'm.K.test_a', status: 'failed' }]);
  });

  it('notes a run without -v, which lists no test', () => {
    const stderr =
      '..F\n----------------------------------------------------------------------\nRan 3 tests in 0.001s\n\nFAILED (failures=1)\n';
    const report = unittestAdapter.parse({ report: null, stdout: '', stderr, exitCode: 1, workdir: '/w' });
    expect(report).toMatchObject({ tests: [], note: 'no per-test lines: run unittest with -v' });
  });
});
