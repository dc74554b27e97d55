import path from 'node:path';
import { parseJUnitDocument, toTestCase, type JUnitCase, type JUnitSuite } from './junit.js';
import { countTests, numberRepeats, type RunnerAdapter, type TestCase } from './types.js';

/** `<classname>::<name>`, or the suite path (`outer > inner > name`) when there is no classname. */
function baseId(c: JUnitCase): string {
  const classname = c.classname.trim();
  const name = c.name.trim();
  return classname ? `${classname}::${name}` : [...c.suites, name].join(' > ');
}

/** The same id with every enclosing suite, for tests that only their suites tell apart. */
function suiteId(c: JUnitCase): string {
  const classname = c.classname.trim();
  const nested = [...c.suites, c.name.trim()].join(' > ');
  return classname ? `${classname}::${nested}` : nested;
}

/**
 * A suite whose attributes declare more failures than its test cases show failed outside them
 * (a hook, a file that did not load): one broken entry named after it, at the deepest such suite.
 */
function suiteErrors(suites: JUnitSuite[]): TestCase[] {
  const short = suites.map((s) => s.declared > s.failing);
  const covered = new Set<number>();
  suites.forEach((s, i) => {
    if (!short[i] && !s.message) return;
    for (let p = s.parent; p !== undefined; p = suites[p]!.parent) covered.add(p);
  });
  return suites.flatMap((s, i) => {
    if (s.message) return [{ id: s.path.join(' > '), status: 'error' as const, message: s.message }];
    if (!short[i] || covered.has(i)) return [];
    const n = s.declared - s.failing;
    return [
      {
        id: s.path.join(' > '),
        status: 'error' as const,
        message: `the suite reports ${n} failure${n > 1 ? 's' : ''} outside its test cases`,
      },
    ];
  });
}

/** Reads a JUnit XML report of any dialect (Surefire, go-junit-report, jest-junit, node, vitest). */
export function parseJUnitReport(xml: string): TestCase[] {
  const { cases, suites } = parseJUnitDocument(xml);
  // Node's reporter names every case's class "test": same-named tests of two describe blocks are
  // then told apart by their suites. The same id under the same suites is numbered, never merged:
  // `it.each` rows and same-named tests are distinct (a tool that lists a retry as a second case
  // shows it as `name [2]`).
  const paths = new Map<string, Set<string>>();
  for (const c of cases) (paths.get(baseId(c)) ?? paths.set(baseId(c), new Set()).get(baseId(c))!).add(c.suites.join('\n'));
  const tests = cases.map((c) => toTestCase(c, paths.get(baseId(c))!.size > 1 ? suiteId(c) : baseId(c)));
  return numberRepeats([...tests, ...suiteErrors(suites)]);
}

/** For any tool that writes JUnit XML: the manifest's `test.reportPath` is read after the run. */
export const junitAdapter: RunnerAdapter = {
  runner: 'junit',
  infrastructure: [],
  prepare(ctx) {
    // The pipeline deletes it before each run, so a stale report is never read as this run's.
    const reportFile = ctx.reportPath ? path.posix.join(ctx.workdir, ctx.reportPath) : undefined;
    return { command: ctx.command, env: {}, ...(reportFile ? { reportFile } : {}) };
  },
  parse(input) {
    if (input.report === null)
      return { source: 'none', tests: [], counts: countTests([]), note: 'the command left no JUnit XML at test.reportPath' };
    try {
      const tests = parseJUnitReport(input.report);
      const note = tests.length ? undefined : 'the JUnit XML at test.reportPath has no <testcase>';
      return { source: 'junit', tests, counts: countTests(tests), ...(note ? { note } : {}) };
    } catch (e) {
      return { source: 'none', tests: [], counts: countTests([]), note: `unreadable JUnit XML: ${(e as Error).message}` };
    }
  },
};
