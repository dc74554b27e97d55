import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { checkPhase } from '../../harness/results/check.js';
import { exitCodeAdapter } from '../../harness/results/exit-code.js';

/** The exit code of a real shell command, as the sandbox would report it. */
const exitOf = (script: string) => spawnSync('/bin/sh', ['-c', script]).status!;

describe('exit-code adapter', () => {
  it('runs the command unchanged and asks for no report', () => {
    expect(exitCodeAdapter.prepare({ command: './check.sh', workdir: '/w', scratchDir: '/s', env: { A: '1' } })).toEqual({
      command: './check.sh',
      env: {},
    });
  });

  it('is one passing test named "exit-code" when the command exits 0', () => {
    const report = exitCodeAdapter.parse({ report: null, stdout: '', stderr: '', exitCode: exitOf('true'), workdir: '/w' });
    expect(report).toEqual({
      source: 'exit-code',
      tests: [{ id: 'exit-code', status: 'passed' }],
      counts: { passed: 1, failed: 0, errors: 0, skipped: 0, total: 1 },
    });
    expect(checkPhase(report, 0, false).state).toBe('pass');
  });

  it('is one failing test for any other exit code', () => {
    for (const code of [exitOf('false'), exitOf('exit 2')]) {
      const report = exitCodeAdapter.parse({ report: null, stdout: '', stderr: '', exitCode: code, workdir: '/w' });
      expect(report.tests).toEqual([{ id: 'exit-code', status: 'failed' }]);
      expect(checkPhase(report, code, false)).toEqual({ state: 'fail', problems: [] });
    }
  });

  it('is no result at all when the command cannot run (126/127): the phase is broken, not failed', () => {
    const code = exitOf('redgreen-no-such-command 2>/dev/null');
    expect(code).toBe(127);
    const report = exitCodeAdapter.parse({ report: null, stdout: '', stderr: '', exitCode: code, workdir: '/w' });
    expect(report.tests).toEqual([]);
    expect(checkPhase(report, code, false).state).toBe('broken');
  });
});
