import { countTests, mergeRepeats, type RunnerAdapter, type TestCase, type TestStatus } from './types.js';

// `test_x (pkg.mod.Class.test_x) ... ok` (3.11+) or `test_x (pkg.mod.Class) ... ok` (older);
// a docstring's first line may follow the parenthesis on the next line before " ... ".
const HEAD = /^(\w+) \(([\w.]+)\)(.*)$/;
// The verdict ends a line: right after " ... ", or on a line of its own when the test printed
// something after the " ... " (print() to stderr, or to stdout with `2>&1`).
const RESULT = /(?:^|\.\.\. )(ok|FAIL|ERROR|skipped|expected failure|unexpected success)(?: ['"].*)?$/;

function statusOf(word: string): TestStatus {
  if (word === 'ok' || word === 'unexpected success') return word === 'ok' ? 'passed' : 'failed';
  if (word === 'FAIL') return 'failed';
  if (word === 'ERROR') return 'error';
  return 'skipped';
}

/** Reads `python -m unittest -v` output (stderr). Ids are dotted: `module.Class.method`. */
export function parseUnittestVerbose(text: string): TestCase[] {
  const lines = text.split('\n');
  const tests: TestCase[] = [];
  for (let i = 0; i < lines.length; i++) {
    const m = HEAD.exec(lines[i]!.trimEnd());
    if (!m) continue;
    const [, name, where, rest] = m as unknown as [string, string, string, string];
    const id = where.endsWith(`.${name}`) ? where : `${where}.${name}`;
    // The verdict is on this line, or on the next when a docstring line sits between; output
    // printed by the test itself can push it further, so look a few lines ahead.
    for (let j = i; j < Math.min(lines.length, i + 50); j++) {
      const r = RESULT.exec((j === i ? rest : lines[j]!).trimEnd());
      if (r) {
        tests.push({ id, status: statusOf(r[1]!) });
        break;
      }
      if (j > i && HEAD.test(lines[j]!)) break;
    }
  }
  // Failures of class/module fixtures: `ERROR: setUpClass (mod.Class)`.
  for (const m of text.matchAll(/^ERROR: (setUpClass|setUpModule|tearDownClass|tearDownModule) \(([\w.]+)\)/gm)) {
    tests.push({ id: `${m[2]}.${m[1]}`, status: 'error' });
  }
  return mergeRepeats(tests);
}

export const unittestAdapter: RunnerAdapter = {
  runner: 'unittest',
  infrastructure: ['sitecustomize.py', 'usercustomize.py', '*.pth'],
  prepare(ctx) {
    return { command: ctx.command, env: {} };
  },
  parse(input) {
    const tests = parseUnittestVerbose(`${input.stderr}\n${input.stdout}`);
    const note = tests.length || !/^Ran \d+ tests?/m.test(input.stderr) ? undefined : 'no per-test lines: run unittest with -v';
    return { source: 'stdout', tests, counts: countTests(tests), ...(note ? { note } : {}) };
  },
};
