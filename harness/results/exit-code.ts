import { countTests, type RunnerAdapter, type TestCase } from './types.js';

/** For suites with no report at all: the whole command is one test named "exit-code". */
export const exitCodeAdapter: RunnerAdapter = {
  runner: 'exit-code',
  infrastructure: [],
  prepare(ctx) {
    return { command: ctx.command, env: {} };
  },
  parse(input) {
    const tests: TestCase[] = [{ id: 'exit-code', status: input.exitCode === 0 ? 'passed' : 'failed' }];
    return { source: 'exit-code', tests, counts: countTests(tests) };
  },
};
