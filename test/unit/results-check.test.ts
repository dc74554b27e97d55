import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { checkPhase } from '../../harness/results/check.js';
import { pytestAdapter } from '../../harness/results/pytest.js';
import { countTests, type TestCase, type TestReport } from '../../harness/results/types.js';
import { vitestAdapter } from '../../harness/results/vitest.js';
import { adapterFor } from '../../harness/results/index.js';
import { captured, capturedInput } from '../helpers/captured.js';

const report = (tests: TestCase[], note?: string): TestReport => ({
  source: 'junit',
  tests,
  counts: countTests(tests),
  ...(note ? { note } : {}),
});
const pass = (id: string): TestCase => ({ id, status: 'passed' });

describe('checkPhase', () => {
  it('passes when every test passes and the command exits 0', () => {
    expect(checkPhase(report([pass('a'), pass('b'), { id: 'c', status: 'skipped' }]), 0, false)).toEqual({ state: 'pass', problems: [] });
  });

  it('fails when a test fails or errors', () => {
    expect(checkPhase(report([pass('a'), { id: 'b', status: 'failed' }]), 1, false)).toEqual({ state: 'fail', problems: [] });
    expect(checkPhase(report([pass('a'), { id: 'b', status: 'error' }]), 1, false)).toEqual({ state: 'fail', problems: [] });
  });

  it('fails, and says so, when the report has failures but the command exited 0', () => {
    expect(checkPhase(report([{ id: 'b', status: 'failed' }]), 0, false)).toEqual({
      state: 'fail',
      problems: ['the report has failures but the command exited 0'],
    });
  });

  it('is broken when the command exits non-zero with no failure parsed', () => {
    expect(checkPhase(report([pass('a')]), 2, false)).toEqual({
      state: 'broken',
      problems: ['exit code 2 with no failing test in the report'],
    });
  });

  it('is broken when no test ran, whatever the exit code', () => {
    expect(checkPhase(report([]), 0, false)).toEqual({ state: 'broken', problems: ['the suite ran no test (exit code 0)'] });
    // pytest exits 5 when it collects nothing.
    expect(checkPhase(report([]), 5, false).state).toBe('broken');
    expect(checkPhase(report([{ id: 'a', status: 'skipped' }]), 0, false).state).toBe('broken');
  });

  it('reports a timeout before anything the partial report says', () => {
    expect(checkPhase(report([pass('a'), { id: 'b', status: 'failed' }]), 137, true)).toEqual({
      state: 'timeout',
      problems: ['the test command timed out'],
    });
  });

  it("carries the adapter's note into the problems", () => {
    expect(checkPhase(report([], 'pytest left no JUnit XML'), 4, false).problems).toEqual([
      'pytest left no JUnit XML',
      'the suite ran no test (exit code 4)',
    ]);
  });

  it('reads the captured runs as failing runs', async () => {
    const data = (f: string) => readFile(new URL(`../data/${f}`, import.meta.url), 'utf8');
    const pytest = pytestAdapter.parse({
      report: await data('pytest/junit.xml'),
      stdout: '',
      stderr: '',
      exitCode: 1,
      workdir: '/WORK/pytest',
    });
    expect(checkPhase(pytest, Number(await data('pytest/exit-code')), false).state).toBe('fail');
    const collect = pytestAdapter.parse({
      report: await data('pytest-collect-error/junit.xml'),
      stdout: '',
      stderr: '',
      exitCode: 2,
      workdir: '/WORK/pytest-collect',
    });
    expect(checkPhase(collect, Number(await data('pytest-collect-error/exit-code')), false).state).toBe('fail');
    const vitest = vitestAdapter.parse({
      report: await data('vitest/report.json'),
      stdout: '',
      stderr: '',
      exitCode: 1,
      workdir: '/WORK/vitest',
    });
    expect(checkPhase(vitest, Number(await data('vitest/exit-code')), false).state).toBe('fail');
  });

  it.each([
    ['jest', 'jest', 'jest', 'report.json'],
    ['mocha', 'mocha', 'mocha', 'report.json'],
    ['mocha', 'mocha-load-error', 'mocha-load', null],
    ['ava', 'ava', 'ava', 'report.jsonl'],
    ['tap', 'tap-tape', 'tape', null],
    ['tap', 'tap-node', 'tap-node', null],
    ['uvu', 'uvu', 'uvu', 'report.jsonl'],
    ['uvu', 'uvu-load-error', 'uvu-load', 'report.jsonl'],
  ] as const)('%s: the captured run %s is a failing run, and with exit 0 it still fails', async (runner, dir, work, reportFile) => {
    const input = { ...(await capturedInput(dir, `/WORK/${work}`)), report: reportFile ? await captured(`${dir}/${reportFile}`) : null };
    const parsed = adapterFor(runner).parse(input);
    expect(checkPhase(parsed, input.exitCode, false).state).toBe('fail');
    expect(checkPhase(parsed, 0, false)).toMatchObject({
      state: 'fail',
      problems: expect.arrayContaining(['the report has failures but the command exited 0']),
    });
  });

  it.each(['jest', 'mocha', 'ava', 'tap', 'uvu'] as const)(
    '%s: a run that left no report and printed nothing is broken, whatever its exit code',
    (runner) => {
      const parsed = adapterFor(runner).parse({ report: null, stdout: '', stderr: '', exitCode: 0, workdir: '/w' });
      expect(checkPhase(parsed, 0, false).state).toBe('broken');
      expect(checkPhase(parsed, 1, false).state).toBe('broken');
    },
  );
});
