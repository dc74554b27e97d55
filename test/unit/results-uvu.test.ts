import { describe, expect, it } from 'vitest';
import { uvuReporterSource } from '../../harness/results/uvu-reporter.js';
import { parseUvuReport, uvuAdapter } from '../../harness/results/uvu.js';
import type { ParseInput } from '../../harness/results/types.js';
import { captured, capturedInput, captureSources, statuses } from '../helpers/captured.js';

// Captured by test/helpers/capture-runner-output.sh: `npx uvu tests` with the NODE_OPTIONS and
// the preloaded module uvuAdapter.prepare builds.
const WORKDIR = '/WORK/uvu';
async function input(): Promise<ParseInput> {
  return { ...(await capturedInput('uvu', WORKDIR)), report: await captured('uvu/report.jsonl') };
}

describe('uvu adapter', () => {
  it('captured its data with the current reporter (rerun the capture script if not)', async () => {
    const { recorded, current } = await captureSources('uvu/reporter.sha256', 'uvu-reporter.ts', 'caller-file.ts');
    expect(recorded).toBe(current);
  });

  it('preloads its module through NODE_OPTIONS, after the user options, and leaves the command alone', () => {
    const p = uvuAdapter.prepare({
      command: 'npx uvu tests',
      workdir: '/w',
      scratchDir: '/s',
      env: { NODE_OPTIONS: '--enable-source-maps' },
    });
    expect(p).toEqual({
      command: 'npx uvu tests',
      env: { NODE_OPTIONS: '--enable-source-maps --require=/s/redgreen-uvu-reporter.cjs' },
      reportFile: '/s/uvu.jsonl',
      files: [{ path: '/s/redgreen-uvu-reporter.cjs', content: uvuReporterSource('/s/uvu.jsonl') }],
    });
  });

  it('names every test by file, suite and name, which uvu itself prints only for failures', async () => {
    const report = uvuAdapter.parse(await input());
    expect(report.source).toBe('json');
    expect(statuses(report.tests)).toEqual({
      'tests/math.test.js::add > adds': 'passed',
      'tests/math.test.js::add > fails': 'failed',
      'tests/math.test.js::add > doubles 1': 'passed',
      'tests/math.test.js::add > doubles 2': 'failed',
      // A generated test that repeats a name is a test of its own, numbered in run order.
      'tests/math.test.js::add > doubles 1 [2]': 'failed',
      // uvu's default suite has no name.
      'tests/math.test.js::top level': 'passed',
      // A CommonJS test file, through uvu's other build.
      'tests/legacy.test.cjs::from commonjs': 'passed',
      // uvu swallows a before hook's error and prints (0 / 2): the suite is one error entry.
      'tests/hook.test.js::needs db': 'error',
      // A before.each hook fails its test.
      'tests/hook.test.js::each > uses it': 'failed',
    });
    // uvu records only how many tests were skipped, never which (add.skip is not in the report).
    expect(report.counts).toEqual({ passed: 4, failed: 4, errors: 1, skipped: 0, total: 9 });
    expect((await input()).stdout.replace(/\u001b\[[0-9;]*m/g, '')).toMatch(/Skipped: {3}1\n/);
  });

  it("takes each failure's message from the block uvu prints after its suite", async () => {
    const byId = new Map(uvuAdapter.parse(await input()).tests.map((t) => [t.id, t.message]));
    expect(byId.get('tests/math.test.js::add > fails')!.split('\n').slice(0, 4)).toEqual([
      'Expected values to be strictly equal:  (is)',
      '',
      '        ++5    (Expected)',
      '        --4    (Actual)',
    ]);
    expect(byId.get('tests/math.test.js::add > doubles 1 [2]')!.split('\n')[2]).toBe('        ++3    (Expected)');
    expect(byId.get('tests/hook.test.js::each > uses it')!.split('\n')[0]).toBe('no fixture');
    expect(byId.get('tests/hook.test.js::needs db')).toBe('2 of 2 test(s) never ran: a before hook failed, or the suite stopped');
    expect(byId.get('tests/math.test.js::add > adds')).toBeUndefined();
  });

  it('ignores lines that are not its own JSON, and a torn last line', () => {
    const jsonl = '{"file":"/w/t.js","suite":"","test":"a","status":"passed"}\nnot json\n{"file":"/w/t.js","suite":"s","te';
    expect(parseUvuReport(jsonl, '/w')).toEqual({ tests: [{ id: 't.js::a', status: 'passed' }], ran: null });
  });

  it('names the file that did not load when uvu stops before any suite', async () => {
    const base = await capturedInput('uvu-load-error', '/WORK/uvu-load');
    const report = uvuAdapter.parse({ ...base, report: await captured('uvu-load-error/report.jsonl') });
    expect(report).toMatchObject({ source: 'stdout', note: 'uvu stopped before running any test' });
    expect(statuses(report.tests)).toEqual({ 'tests/broken.test.js': 'error' });
    expect(report.tests[0]!.message!.split('\n')[0]).toMatch(/^Error \[ERR_MODULE_NOT_FOUND\]: Cannot find module/);
  });

  it('without the report, reads the failures uvu printed (their suite and name: uvu names no file, and no pass)', async () => {
    const report = uvuAdapter.parse({ ...(await input()), report: null });
    expect(report).toMatchObject({
      source: 'stdout',
      note: "uvu left no report (the harness's preloaded module did not run): only the failures uvu printed are known",
    });
    expect(statuses(report.tests)).toEqual({
      'each > uses it': 'failed',
      'add > fails': 'failed',
      'add > doubles 2': 'failed',
      'add > doubles 1': 'failed',
    });
    expect(report.tests.find((t) => t.id === 'add > fails')!.message!.split('\n')[0]).toBe('Expected values to be strictly equal:  (is)');
    expect(uvuAdapter.parse({ ...(await input()), report: null, stdout: '', exitCode: 0 })).toMatchObject({
      source: 'none',
      tests: [],
      note: "uvu left no report (the harness's preloaded module did not run)",
    });
  });
});
