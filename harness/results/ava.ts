import { appendArgs } from './append-args.js';
import { tapReport } from './tap-runner.js';
import type { RunnerAdapter, TestCase } from './types.js';

/**
 * ava's TAP titles, as ava prints them: with more than one test file it prefixes each title with
 * its file (`test/sub/deep.test.js` → `sub › deep › passes`: the folders below the files' common
 * one, the file name without `.test`/`.spec` and extension). A file that crashed is an error
 * named after the file.
 */
export function avaTest(t: TestCase): TestCase {
  const id = t.id;
  const crashed =
    /^(.+?) (exited with a non-zero exit code: \d+|exited due to \w+)$/.exec(id) ?? /^No tests found in (.+?)(,.*)?$/.exec(id);
  if (crashed) return { id: crashed[1]!, status: 'error', message: id };
  return t;
}

export const avaAdapter: RunnerAdapter = {
  runner: 'ava',
  infrastructure: ['package.json', 'ava.config.*', 'babel.config.*', '.babelrc*', 'tsconfig.json', '.npmrc'],
  prepare(ctx) {
    // ava's only machine-readable output is TAP, chosen on its command line: the command must end
    // with the ava invocation (`npx ava`, `npm test`), which `validate` checks.
    return { command: appendArgs(ctx.command, '--tap'), env: {} };
  },
  parse(input) {
    return tapReport(input, 'ava', avaTest);
  },
};
