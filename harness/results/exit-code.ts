import { countTests, type RunnerAdapter, type TestCase } from './types.js';

/** For suites with no report at all: the whole command is one test named "exit-code". */
export const exitCodeAdapter: RunnerAdapter = {
  runner: 'exit-code',
  infrastructure: [],
  prepare(ctx) {
    return { command: ctx.command, env: {} };
  },
  parse(input) {
    // 126/127: the shell could not run the command at all; that is no test result.
    if (input.exitCode === 126 || input.exitCode === 127) {
      return {
        source: 'exit-code',
        tests: [],
        counts: countTests([]),
        note: `the command could not run (exit ${input.exitCode}: not found or not executable)`,
      };
    }
    const tests: TestCase[] = [{ id: 'exit-code', status: input.exitCode === 0 ? 'passed' : 'failed' }];
    return { source: 'exit-code', tests, counts: countTests(tests) };
  },
};
