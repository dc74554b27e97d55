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
});
