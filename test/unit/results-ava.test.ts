import { describe, expect, it } from 'vitest';
import { avaReporterSource } from '../../harness/results/ava-reporter.js';
import { avaAdapter } from '../../harness/results/ava.js';
import type { ParseInput } from '../../harness/results/types.js';
import { captured, capturedInput, captureSources, statuses } from '../helpers/captured.js';

// Captured by test/helpers/capture-runner-output.sh: `npx ava` with the --tap and the worker
// module avaAdapter.prepare adds; once in worker threads (ava's default), once in child processes.
const WORKDIR = '/WORK/ava';
async function input(dir = 'ava'): Promise<ParseInput> {
  return { ...(await capturedInput(dir, WORKDIR)), report: await captured(`${dir}/report.jsonl`) };
}

const EXPECTED = {
  'test/cart.test.js::passes': 'passed',
  'test/cart.test.js::fails': 'failed',
  'test/cart.test.js::skipped': 'skipped',
  'test/cart.test.js::later': 'skipped', // test.todo
  'test/cart.test.js::known bug': 'passed', // test.failing that fails as expected
  // Parametrised through a macro.
  'test/cart.test.js::doubles 1': 'passed',
  'test/cart.test.js::doubles 2': 'failed',
  'test/cart.test.js::logs': 'passed',
  'test/sub/deep.test.js::passes': 'passed',
  // A before hook that threw: its tests never run, the hook is the error.
  'test/hook.test.js::before hook': 'error',
  // A file that did not load.
  'test/broken.test.js': 'error',
};

describe('ava adapter', () => {
  it('captured its data with the current worker module (rerun the capture script if not)', async () => {
    const { recorded, current } = await captureSources('ava/reporter.sha256', 'ava-reporter.ts');
    expect(recorded).toBe(current);
  });

  it('appends --tap to the ava command and preloads its worker module through NODE_OPTIONS', () => {
    const p = avaAdapter.prepare({ command: 'npm test', workdir: '/w', scratchDir: '/s', env: { NODE_OPTIONS: '--no-warnings' } });
    expect(p).toEqual({
      command: 'npm test -- --tap',
      env: { NODE_OPTIONS: '--no-warnings --require=/s/redgreen-ava-reporter.cjs' },
      reportFile: '/s/ava.jsonl',
      files: [{ path: '/s/redgreen-ava-reporter.cjs', content: avaReporterSource('/s/ava.jsonl') }],
    });
  });

  it('names every test by its file, in worker threads and in child processes alike', async () => {
    for (const dir of ['ava', 'ava-processes']) {
      const report = avaAdapter.parse(await input(dir));
      expect(report.source, dir).toBe('json');
      expect(statuses(report.tests), dir).toEqual(EXPECTED);
      expect(report.counts, dir).toEqual({ passed: 5, failed: 2, errors: 2, skipped: 2, total: 11 });
    }
  });

  it("keeps ava's account of each failure", async () => {
    const byId = new Map(avaAdapter.parse(await input()).tests.map((t) => [t.id, t.message]));
    expect(byId.get('test/cart.test.js::fails')).toBe('Difference (- actual, + expected):\n- 2\n+ 3');
    expect(byId.get('test/hook.test.js::before hook')!.split('\n').slice(0, 4)).toEqual([
      'Error thrown in test',
      'Error thrown in test:',
      'Error {',
      "  message: 'no database',",
    ]);
    expect(byId.get('test/broken.test.js')).toBe(
      "Cannot find module '/WORK/ava/test/missing.js' imported from /WORK/ava/test/broken.test.js",
    );
  });

  it("without the worker report: ava's TAP titles, file-prefixed as ava prints them, and a crashed file named after it", async () => {
    const report = avaAdapter.parse({ ...(await input()), report: null });
    expect(report.source).toBe('tap');
    expect(report.note).toMatch(/^ava's workers left no report/);
    expect(statuses(report.tests)).toEqual({
      'cart › passes': 'passed',
      'cart › fails': 'failed',
      'cart › skipped': 'skipped',
      'cart › later': 'skipped',
      'cart › known bug': 'passed',
      'cart › doubles 1': 'passed',
      'cart › doubles 2': 'failed',
      'cart › logs': 'passed',
      'sub › deep › passes': 'passed',
      'hook › before hook': 'failed',
      "Error [ERR_MODULE_NOT_FOUND]: Cannot find module 'test/missing.js' imported from test/broken.test.js": 'failed',
      'test/broken.test.js': 'error',
    });
  });

  it('a file that crashed in a way only TAP tells is added from it', async () => {
    const base = await input();
    const tap = 'TAP version 13\nok 1 - a › works\nnot ok 2 - test/b.test.js exited due to SIGKILL\n1..2\n';
    const report = avaAdapter.parse({
      ...base,
      stdout: tap,
      report: '{"file":"/WORK/ava/test/a.test.js","title":"works","status":"passed"}\n',
    });
    expect(statuses(report.tests)).toEqual({ 'test/a.test.js::works': 'passed', 'test/b.test.js': 'error' });
  });
});
