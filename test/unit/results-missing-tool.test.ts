import { describe, expect, test } from 'vitest';
import { tailOf as tail } from '../../harness/errors.js';
import { missingCommand, missingRunnerTool } from '../../harness/results/missing-tool.js';

describe('a missing runner tool is told apart from a broken test command', () => {
  test('what the shell and Python say is missing', () => {
    expect(missingCommand('/usr/bin/python3: No module named pytest\n', 1)).toEqual({ name: 'pytest', module: true });
    expect(missingCommand("ModuleNotFoundError: No module named 'pytest.main'\n", 1)).toEqual({ name: 'pytest', module: true });
    expect(missingCommand('sh: 1: vitset: not found\n', 127)).toEqual({ name: 'vitset', module: false });
    expect(missingCommand('bash: line 1: cargo: command not found\n', 127)).toEqual({ name: 'cargo', module: false });
    // "not found" in a test's own output, with an ordinary failing exit, is not a missing command.
    expect(missingCommand('sh: 1: cargo: not found\n', 1)).toBeNull();
    expect(missingCommand('AssertionError: key not found\n', 127)).toBeNull();
  });

  test("only the runner's own tools are the machine's fault", () => {
    expect(missingRunnerTool('pytest', '/usr/bin/python3: No module named pytest', 1)).toBe('pytest');
    expect(missingRunnerTool('vitest', 'sh: 1: npx: not found', 127)).toBe('npx');
    expect(missingRunnerTool('go', 'sh: 1: go: not found', 127)).toBe('go');
    // A typo in test.command is the fixture's problem.
    expect(missingRunnerTool('vitest', 'sh: 1: vitset: not found', 127)).toBeNull();
    expect(missingRunnerTool('pytest', "No module named 'calc'", 1)).toBeNull();
  });

  test('the tail of a stream is its last lines, on one line', () => {
    expect(tail('a\nb\nc\nd\n')).toBe('b ⏎ c ⏎ d');
    expect(tail('x'.repeat(1000)).length).toBe(400);
  });

  test('plain text, and the line that names the error first when the last lines are only an epilogue', () => {
    expect(tail('\x1b[31mERROR\x1b[0m: boom\n\x1b]0;title\x07done\n')).toBe('ERROR: boom ⏎ done');
    const pip = [
      'Processing /workspace',
      '  Installing build dependencies: started',
      '  ERROR: Could not find a version that satisfies the requirement setuptools>=40.8.0 (from versions: none)',
      '  ERROR: No matching distribution found for setuptools>=40.8.0',
      '  error: subprocess-exited-with-error',
      '',
      '  \x1b[31m×\x1b[0m pip subprocess to install build dependencies did not run successfully.',
      '  ╰─> See above for output.',
      'note: This error originates from a subprocess, and is likely not a problem with pip.',
    ].join('\n');
    expect(tail(pip)).toBe(
      'ERROR: Could not find a version that satisfies the requirement setuptools>=40.8.0 (from versions: none) ⏎ … ⏎ ' +
        '  × pip subprocess to install build dependencies did not run successfully. ⏎   ╰─> See above for output. ⏎ ' +
        'note: This error originates from a subprocess, and is likely not a problem with pip.',
    );
  });
});
