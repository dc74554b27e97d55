import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { captureSources } from '../helpers/captured.js';
import { NODE_REPORTER_SOURCE } from '../../harness/results/node-reporter.js';
import { nodeTestAdapter, parseNodeEvents } from '../../harness/results/node-test.js';
import type { ParseInput } from '../../harness/results/types.js';

// Captured by test/helpers/capture-runner-output.sh: `node --test` with the NODE_OPTIONS and the
// reporter module that nodeTestAdapter.prepare builds.
const data = (f: string) => readFile(new URL(`../data/node-test/${f}`, import.meta.url), 'utf8');
const WORKDIR = '/WORK/node';

async function input(): Promise<ParseInput> {
  return {
    report: await data('report.jsonl'),
    stdout: await data('stdout.txt'),
    stderr: '',
    exitCode: Number(await data('exit-code')),
    workdir: WORKDIR,
  };
}

const statuses = (tests: { id: string; status: string }[]) => Object.fromEntries(tests.map((t) => [t.id, t.status]));

describe('node:test adapter', () => {
  it('captured its data with the current reporter (rerun the capture script if not)', async () => {
    const { recorded, current } = await captureSources('node-test/reporter.sha256', 'node-reporter.ts');
    expect(recorded).toBe(current);
  });

  it('adds its reporter to NODE_OPTIONS, after the user options, and writes the reporter module', () => {
    const p = nodeTestAdapter.prepare({
      command: 'npm test',
      workdir: '/w',
      scratchDir: '/s',
      env: { NODE_OPTIONS: '--max-old-space-size=512' },
    });
    expect(p).toEqual({
      command: 'npm test',
      env: {
        NODE_OPTIONS:
          '--max-old-space-size=512 --test-reporter=/s/redgreen-node-reporter.mjs --test-reporter-destination=/s/node-test.jsonl --test-reporter=spec --test-reporter-destination=stdout',
      },
      reportFile: '/s/node-test.jsonl',
      files: [{ path: '/s/redgreen-node-reporter.mjs', content: NODE_REPORTER_SOURCE }],
    });
  });

  it('reads file-relative ids with the describe path, and every status', async () => {
    const report = nodeTestAdapter.parse(await input());
    expect(report.source).toBe('json');
    expect(statuses(report.tests)).toEqual({
      // A file that does not load is one failing test named after the file.
      'test/syntax.test.js': 'failed',
      'test/x.test.js::suite > passes': 'passed',
      'test/x.test.js::suite > fails': 'failed',
      'test/x.test.js::suite > inner > deep': 'passed',
      'test/x.test.js::suite > skipped': 'skipped',
      'test/x.test.js::suite > todo': 'skipped',
      // node does not count a failing todo test as a failure, nor does the adapter.
      'test/x.test.js::suite > todo that fails': 'skipped',
      // Two tests named alike are two tests: the failing first one is not hidden by the second.
      'test/x.test.js::adds': 'failed',
      'test/x.test.js::adds [2]': 'passed',
      'test/x.test.js::top > child': 'passed',
      'test/x.test.js::top > child fails': 'failed',
      // A test with subtests is a test of its own to node (it counts it in "tests").
      'test/x.test.js::top': 'failed',
      'test/x.test.js::hooked > never runs': 'failed',
      // A suite whose before() hook threw is broken on its own: an error, not a test failure.
      'test/x.test.js::hooked': 'error',
    });
  });

  it('keeps the failure message, not the wrapper node puts around it', async () => {
    const byId = new Map(nodeTestAdapter.parse(await input()).tests.map((t) => [t.id, t.message]));
    expect(byId.get('test/x.test.js::suite > fails')).toBe('Expected values to be strictly equal:\n\n1 !== 2');
    expect(byId.get('test/x.test.js::hooked')).toBe('before exploded');
    expect(byId.get('test/x.test.js::top > child fails')).toBe('child broke');
  });

  it('agrees with the pass/fail counts node printed', async () => {
    const { stdout, report } = { stdout: await data('stdout.txt'), report: nodeTestAdapter.parse(await input()) };
    const count = (word: string) => Number(new RegExp(`^ℹ ${word} (\\d+)$`, 'm').exec(stdout)?.[1]);
    expect(report.counts.passed).toBe(count('pass'));
    expect(report.counts.failed).toBe(count('fail') + count('cancelled'));
    expect(report.counts.skipped).toBe(count('skipped') + count('todo'));
  });

  it('ignores a torn last line and says so when there is no report', () => {
    const line = JSON.stringify({ file: `${WORKDIR}/a.test.js`, path: ['t'], type: 'test', status: 'passed' });
    expect(parseNodeEvents(`${line}\n{"file":"/WORK/no`, WORKDIR)).toEqual([{ id: 'a.test.js::t', status: 'passed' }]);
    expect(nodeTestAdapter.parse({ report: null, stdout: '', stderr: '', exitCode: 1, workdir: WORKDIR })).toEqual({
      source: 'none',
      tests: [],
      counts: { passed: 0, failed: 0, errors: 0, skipped: 0, total: 0 },
      note: 'node:test left no report',
    });
  });
});
