import { describe, expect, it } from 'vitest';
import { parseTap } from '../../harness/results/tap.js';
import { tapAdapter } from '../../harness/results/tap-runner.js';
import { tapeNamesSource } from '../../harness/results/tape-names.js';
import { capturedInput, captureSources, statuses } from '../helpers/captured.js';

// Captured by test/helpers/capture-runner-output.sh: tape and node's TAP reporter, as the tap adapter runs them.
describe('tap adapter: tape and other TAP producers', () => {
  it('captured its data with the current tape module (rerun the capture script if not)', async () => {
    const { recorded, current } = await captureSources('tap-tape/names.sha256', 'tape-names.ts', 'caller-file.ts');
    expect(recorded).toBe(current);
  });

  it('runs the command as it is, its module that names files preloaded through NODE_OPTIONS after the user options', () => {
    const p = tapAdapter.prepare({
      command: "npx tape 'test/*.js'",
      workdir: '/w',
      scratchDir: '/s',
      env: { NODE_OPTIONS: '--max-old-space-size=512' },
    });
    expect(p).toEqual({
      command: "npx tape 'test/*.js'",
      env: { NODE_OPTIONS: '--max-old-space-size=512 --require=/s/redgreen-tape-names.cjs' },
      files: [{ path: '/s/redgreen-tape-names.cjs', content: tapeNamesSource() }],
    });
  });

  it('tape: a test is a `# file::name` group of assertions; the test the run died in is an error', async () => {
    const report = tapAdapter.parse(await capturedInput('tap-tape', '/WORK/tape'));
    expect(report.source).toBe('tap');
    expect(statuses(report.tests)).toEqual({
      'test/a.js::adds': 'failed',
      'test/a.js::nested': 'passed',
      'test/a.js::nested > inner': 'passed', // t.test: tape prints subtests flat, named after their parent
      'test/a.js::skipped': 'skipped',
      'test/a.js::todo': 'skipped', // a todo's failing assertion is not a failure
      'test/a.js::doubles 1': 'passed',
      'test/a.js::doubles 2': 'failed',
      'test/a.js::doubles 1 [2]': 'failed',
      'test/b.js::b works': 'passed',
      'test/b.js::adds': 'passed', // the name of a test in a.js: the file keeps them apart
      'test/z.js::throws': 'error',
    });
    const byId = new Map(report.tests.map((t) => [t.id, t.message]));
    expect(byId.get('test/a.js::adds')!.split('\n').slice(0, 4)).toEqual(['two plus two', 'operator: equal', 'expected: 5', 'actual:   4']);
    expect(byId.get('test/z.js::throws')).toBe('the TAP stream ended inside this test (the run crashed or was killed)');
  });

  it("node's TAP reporter: subtests by their path; a file that failed is named relative to the workspace", async () => {
    const report = tapAdapter.parse(await capturedInput('tap-node', '/WORK/tap-node'));
    expect(statuses(report.tests)).toEqual({
      'outer > inner > deep': 'passed',
      'outer > inner > deep fails': 'failed',
      'outer > skipped': 'skipped',
      'outer > later': 'skipped',
      'outer > same name': 'passed',
      'outer > same name [2]': 'failed',
      'needs db > reads': 'failed', // cancelled by the hook that failed
      'top level # with a hash': 'passed',
      'test/syntax.test.js': 'failed',
    });
    const byId = new Map(report.tests.map((t) => [t.id, t.message]));
    expect(byId.get('outer > inner > deep fails')!.split('\n')[0]).toBe('Expected values to be strictly deep-equal:');
    expect(byId.get('outer > same name [2]')).toBe('the second one fails');
  });

  it('says so when the command printed no TAP', () => {
    expect(tapAdapter.parse({ report: null, stdout: 'hello\n', stderr: '', exitCode: 1, workdir: '/w' })).toMatchObject({
      source: 'none',
      tests: [],
      note: 'the test command printed no TAP on stdout',
    });
  });
});

describe('parseTap', () => {
  it('a parent that failed with no failing subtest broke on its own; a bail out is an error', () => {
    const stream = [
      'TAP version 14',
      '# Subtest: suite',
      '    ok 1 - a',
      '    1..1',
      'not ok 1 - suite',
      '  ---',
      "  error: 'afterAll hook failed'",
      '  ...',
      'Bail out! database down',
    ].join('\n');
    expect(parseTap(stream)).toEqual({
      tests: [
        { id: 'suite > a', status: 'passed' },
        { id: 'suite', status: 'error', message: 'afterAll hook failed' },
        { id: 'Bail out!', status: 'error', message: 'database down' },
      ],
      bailOut: 'database down',
    });
  });

  it('a stream cut inside a subtest: its finished subtests count, and the open parent is an error', () => {
    const stream = ['TAP version 13', '# Subtest: outer', '    # Subtest: first', '    ok 1 - first', '    # Subtest: second'].join('\n');
    expect(parseTap(stream).tests).toEqual([
      { id: 'outer > first', status: 'passed' },
      { id: 'outer', status: 'error', message: 'the TAP stream ended inside this test (the run crashed or was killed)' },
    ]);
  });

  it('ignores the output of the tests between TAP lines, and escaped hashes are part of a name', () => {
    expect(parseTap('TAP version 13\nok 1 - a \\# b\nconsole output\nnot ok 2 - c # TODO later\n1..2\n').tests).toEqual([
      { id: 'a # b', status: 'passed' },
      { id: 'c', status: 'skipped' },
    ]);
  });
});
