import { parseTap } from './tap.js';
import { tapeNamesSource } from './tape-names.js';
import { countTests, type ParseInput, type RunnerAdapter, type TestCase, type TestReport } from './types.js';

/** Paths inside the workspace made relative (a crash names its file): ids must not change with the workspace. */
function relativeIds(t: TestCase, workdir: string): TestCase {
  const id = t.id.replaceAll(`file://${workdir}/`, '').replaceAll(`${workdir}/`, '');
  return id === t.id ? t : { ...t, id };
}

/** The TAP stream on stdout as a report; `rename` adjusts each test (a producer's own conventions). */
export function tapReport(input: ParseInput, producer: string, rename: (t: TestCase) => TestCase = (t) => t): TestReport {
  if (!/^\s*(TAP version \d+|(not )?ok\b|1\.\.\d+)/m.test(input.stdout)) {
    return { source: 'none', tests: [], counts: countTests([]), note: `${producer} printed no TAP on stdout` };
  }
  const { tests, bailOut } = parseTap(input.stdout);
  const renamed = tests.map((t) => rename(relativeIds(t, input.workdir)));
  return {
    source: 'tap',
    tests: renamed,
    counts: countTests(renamed),
    ...(bailOut !== undefined ? { note: `the TAP stream bailed out${bailOut ? `: ${bailOut}` : ''}` } : {}),
  };
}

/**
 * For tape and any other TAP producer: the command prints TAP on stdout (`npx tape 'test/*.js'`,
 * `node --test --test-reporter=tap`, `npx tap --reporter=tap`). TAP names no files: tape's tests
 * get theirs from a preloaded module (tape-names.ts), `test/a.js::name` and
 * `test/a.js::name > subtest`; other producers' ids are the path of subtest names, `outer > inner`.
 */
export const tapAdapter: RunnerAdapter = {
  runner: 'tap',
  infrastructure: ['package.json', '.taprc', '.npmrc'],
  prepare(ctx) {
    const names = `${ctx.scratchDir}/redgreen-tape-names.cjs`;
    // NODE_OPTIONS reaches the node process that runs tape whatever starts it (npx tape, npm test).
    const ours = `--require=${names}`;
    return {
      command: ctx.command,
      env: { NODE_OPTIONS: ctx.env.NODE_OPTIONS ? `${ctx.env.NODE_OPTIONS} ${ours}` : ours },
      files: [{ path: names, content: tapeNamesSource() }],
    };
  },
  parse(input) {
    return tapReport(input, 'the test command');
  },
};
