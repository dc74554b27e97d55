import { describe, expect, it } from 'vitest';
import { mochaReporterSource } from '../../harness/results/mocha-reporter.js';
import { mochaAdapter, mochaLoadError } from '../../harness/results/mocha.js';
import type { ParseInput } from '../../harness/results/types.js';
import { captured, capturedInput, captureSources, statuses } from '../helpers/captured.js';

// Captured by test/helpers/capture-runner-output.sh: `npx mocha` with the reporter mochaAdapter writes and names.
const WORKDIR = '/WORK/mocha';
async function input(): Promise<ParseInput> {
  return { ...(await capturedInput('mocha', WORKDIR)), report: await captured('mocha/report.json') };
}

describe('mocha adapter', () => {
  it('captured its data with the current reporter (rerun the capture script if not)', async () => {
    const { recorded, current } = await captureSources('mocha/reporter.sha256', 'mocha-reporter.ts');
    expect(recorded).toBe(current);
  });

  it('names its reporter module on the mocha command and writes it into the scratch folder', async () => {
    const p = mochaAdapter.prepare({ command: 'npm test', workdir: '/w', scratchDir: '/s', env: {} });
    expect(p).toEqual({
      command: 'npm test -- --reporter /s/redgreen-mocha-reporter.cjs',
      env: {},
      reportFile: '/s/mocha.json',
      files: [{ path: '/s/redgreen-mocha-reporter.cjs', content: mochaReporterSource('/s/mocha.json') }],
    });
    expect(p.files![0]!.content).toContain('const REPORT = "/s/mocha.json";');
    expect((await captured('mocha/command.txt')).trim()).toBe('npx mocha --reporter /WORK/out/mocha/redgreen-mocha-reporter.cjs');
  });

  it('reads file-relative ids with every describe title, and every status', async () => {
    const report = mochaAdapter.parse(await input());
    expect(report.source).toBe('json');
    expect(statuses(report.tests)).toEqual({
      'test/cart.test.js::top level': 'passed',
      'test/cart.test.js::outer > inner > deep': 'passed',
      'test/cart.test.js::outer > inner > deep fails': 'failed',
      'test/cart.test.js::outer > doubles 1': 'passed',
      'test/cart.test.js::outer > doubles 2': 'failed',
      // A generated test that repeats a name is a test of its own, numbered in run order.
      'test/cart.test.js::outer > doubles 1 [2]': 'failed',
      'test/cart.test.js::outer > skipped': 'skipped',
      'test/cart.test.js::outer > pending': 'skipped',
      // A failed hook stops its suite's tests (mocha does not report them): one error at the suite.
      'test/hook.test.js::needs db': 'error',
      'test/hook.test.js::each': 'error',
    });
    expect(report.counts).toEqual({ passed: 3, failed: 3, errors: 2, skipped: 2, total: 10 });
    // With --parallel, the reporter gets the same results from mocha's worker processes.
    const parallel = mochaAdapter.parse({
      ...(await capturedInput('mocha-parallel', WORKDIR)),
      report: await captured('mocha-parallel/report.json'),
    });
    expect(statuses(parallel.tests)).toEqual(statuses(report.tests));
    // mocha's exit code is its number of failures, hooks included.
    expect((await input()).exitCode).toBe(5);
  });

  it('keeps the first lines of each failure, and which hook failed', async () => {
    const byId = new Map(mochaAdapter.parse(await input()).tests.map((t) => [t.id, t.message]));
    expect(byId.get('test/cart.test.js::outer > doubles 2')!.split('\n').slice(0, 3)).toEqual([
      'AssertionError [ERR_ASSERTION]: Expected values to be strictly equal:',
      '',
      '4 !== 5',
    ]);
    expect(byId.get('test/hook.test.js::needs db')!.split('\n')[0]).toBe('"before all" hook failed: Error: no database');
    expect(byId.get('test/hook.test.js::each')!.split('\n')[0]).toBe('"before each" hook failed: Error: no fixture');
    expect(byId.get('test/cart.test.js::top level')).toBeUndefined();
  });

  it('keeps the spec output on stdout for the transcript', async () => {
    expect((await input()).stdout).toMatch(/^ {2}3 passing \(\d+ms\)$/m);
  });

  it('names the file that did not load when mocha stops before any test', async () => {
    const report = mochaAdapter.parse(await capturedInput('mocha-load-error', '/WORK/mocha-load'));
    expect(report).toMatchObject({ source: 'stdout', note: 'mocha stopped before running any test' });
    expect(statuses(report.tests)).toEqual({ 'test/broken.test.js': 'error' });
    expect(report.tests[0]!.message!.split('\n')[0]).toBe("Error: Cannot find module './missing'");
  });

  it("names the file that did not load with mocha 10.2 too, which prints the error's stack alone", async () => {
    const input = await capturedInput('mocha10-load-error', '/WORK/mocha10-load');
    expect(input.stderr).not.toContain('Exception during run');
    const report = mochaAdapter.parse(input);
    expect(report).toMatchObject({ source: 'stdout', note: 'mocha stopped before running any test' });
    expect(statuses(report.tests)).toEqual({ 'test/broken.test.js': 'error' });
    expect(report.tests[0]!.message!.split('\n')[0]).toBe('TypeError: api.conflicts is not iterable');
    // A stack that is not mocha loading its files is no load error.
    expect(mochaLoadError('TypeError: x\n    at foo (/WORK/mocha10-load/test/a.test.js:1:1)\n', '/WORK/mocha10-load')).toBeNull();
  });

  it('says why when the report is missing or unreadable', async () => {
    const base = await input();
    expect(mochaAdapter.parse({ ...base, report: null, stderr: '' })).toMatchObject({
      source: 'none',
      tests: [],
      note: "mocha left no report (is the harness's --reporter on the mocha command?)",
    });
    expect(mochaAdapter.parse({ ...base, report: '{"tests": [' })).toMatchObject({
      source: 'none',
      note: expect.stringMatching(/^unreadable mocha report: /),
    });
  });
});
