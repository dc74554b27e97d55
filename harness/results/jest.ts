import { appendArgs } from './append-args.js';
import { parseJestStyleJson } from './jest-json.js';
import { countTests, type ParseInput, type RunnerAdapter, type TestReport } from './types.js';

/** jest's `--json` document when it went to stdout (a command that prints it itself): its first `{` to its last `}`. */
function jsonOnStdout(stdout: string): string | null {
  const start = stdout.search(/^\{.*"testResults"/m);
  const end = stdout.lastIndexOf('}');
  return start >= 0 && end > start ? stdout.slice(start, end + 1) : null;
}

function parse(input: ParseInput): TestReport {
  const fromStdout = input.report === null ? jsonOnStdout(input.stdout) : null;
  const json = input.report ?? fromStdout;
  if (json === null) return { source: 'none', tests: [], counts: countTests([]), note: 'jest left no JSON report' };
  try {
    const tests = parseJestStyleJson(json, input.workdir);
    return {
      source: fromStdout ? 'stdout' : 'json',
      tests,
      counts: countTests(tests),
      ...(fromStdout ? { note: 'jest left no JSON report file; its JSON on stdout was read' } : {}),
    };
  } catch (e) {
    return { source: 'none', tests: [], counts: countTests([]), note: `unreadable jest JSON: ${(e as Error).message}` };
  }
}

/** jest's own JSON report: ids are `src/a.test.js::describe > test`, as for vitest (the same format). */
export const jestAdapter: RunnerAdapter = {
  runner: 'jest',
  infrastructure: ['package.json', 'jest.config.*', 'jest.setup.*', 'babel.config.*', '.babelrc*', 'tsconfig.json', '.npmrc'],
  prepare(ctx) {
    const reportFile = `${ctx.scratchDir}/jest.json`;
    // jest takes its report options from the command line only: the command must end with the
    // jest invocation (`npx jest`, `npm test`), which `validate` checks.
    return { command: appendArgs(ctx.command, `--json --outputFile=${reportFile}`), env: {}, reportFile };
  },
  parse,
};
