import { appendArgs } from './append-args.js';
import { parseJestStyleJson } from './jest-json.js';
import { countTests, type RunnerAdapter, type TestCase } from './types.js';

/** `src/a.test.ts::outer > inner > deep`: the file relative to the workspace, then the titles. */
export function parseVitestJson(json: string, workdir: string): TestCase[] {
  return parseJestStyleJson(json, workdir);
}

export const vitestAdapter: RunnerAdapter = {
  runner: 'vitest',
  infrastructure: ['package.json', 'vitest.config.*', 'vite.config.*', 'vitest.workspace.*', 'vitest.setup.*', 'tsconfig.json', '.npmrc'],
  prepare(ctx) {
    const reportFile = `${ctx.scratchDir}/vitest.json`;
    // vitest reads reporters from its CLI only, so they are appended: the command must end with
    // the vitest invocation (`npx vitest run`, `npm test`), which `validate` checks.
    const command = appendArgs(ctx.command, `--reporter=default --reporter=json --outputFile.json=${reportFile}`);
    return { command, env: {}, reportFile };
  },
  parse(input) {
    if (input.report === null) return { source: 'none', tests: [], counts: countTests([]), note: 'vitest left no JSON report' };
    try {
      const tests = parseVitestJson(input.report, input.workdir);
      return { source: 'json', tests, counts: countTests(tests) };
    } catch (e) {
      return { source: 'none', tests: [], counts: countTests([]), note: `unreadable vitest JSON: ${(e as Error).message}` };
    }
  },
};
