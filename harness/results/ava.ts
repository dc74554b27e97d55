import path from 'node:path';
import { appendArgs } from './append-args.js';
import { avaReporterSource } from './ava-reporter.js';
import { tapReport } from './tap-runner.js';
import { countTests, firstLines, numberRepeats, type RunnerAdapter, type TestCase } from './types.js';

/**
 * A TAP line of ava's that is about a file, not a test: the file crashed. It is an error named
 * after the file, as the worker report names a file whose code threw outside any test.
 */
export function avaTest(t: TestCase): TestCase {
  const crashed =
    /^(.+?) (exited with a non-zero exit code: \d+|exited due to \w+)$/.exec(t.id) ?? /^No tests found in (.+?)(,.*)?$/.exec(t.id);
  return crashed ? { id: crashed[1]!, status: 'error', message: t.id } : t;
}

/** `test/cart.test.js::title` from the worker report; `test/cart.test.js` for what threw outside a test. */
export function parseAvaReport(jsonl: string, workdir: string): TestCase[] {
  const tests: TestCase[] = [];
  for (const line of jsonl.split('\n')) {
    if (!line.trim()) continue;
    let e: { file?: string; title?: string | null; status?: TestCase['status']; message?: string };
    try {
      e = JSON.parse(line) as typeof e;
    } catch {
      continue; // a torn last line when the run was killed
    }
    const file = e.file
      ? path
          .relative(workdir, e.file.replace(/^file:\/\//, ''))
          .split(path.sep)
          .join('/')
      : '(ava)';
    tests.push({
      id: e.title ? `${file}::${e.title}` : file,
      status: e.status ?? 'error',
      ...(e.message ? { message: firstLines(e.message)! } : {}),
    });
  }
  // ava runs a file's tests concurrently, so lines come in completion order: sorted, ids and the
  // numbering of repeated titles do not depend on timing.
  return numberRepeats(tests.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)));
}

export const avaAdapter: RunnerAdapter = {
  runner: 'ava',
  infrastructure: ['package.json', 'ava.config.*', 'babel.config.*', '.babelrc*', 'tsconfig.json', '.npmrc'],
  prepare(ctx) {
    const reporter = `${ctx.scratchDir}/redgreen-ava-reporter.cjs`;
    const reportFile = `${ctx.scratchDir}/ava.jsonl`;
    const ours = `--require=${reporter}`;
    // ava's TAP (for the transcript, the crashes of whole files, and as the fallback) is chosen on
    // its command line: the command must end with the ava invocation (`npx ava`, `npm test`),
    // which `validate` checks. The worker module comes through NODE_OPTIONS, which ava's workers inherit.
    return {
      command: appendArgs(ctx.command, '--tap'),
      env: { NODE_OPTIONS: ctx.env.NODE_OPTIONS ? `${ctx.env.NODE_OPTIONS} ${ours}` : ours },
      reportFile,
      files: [{ path: reporter, content: avaReporterSource(reportFile) }],
    };
  },
  parse(input) {
    const tap = tapReport(input, 'ava', avaTest);
    if (input.report === null) {
      const note = "ava's workers left no report: ids are ava's TAP titles (file-prefixed only when several files ran)";
      return { ...tap, note: tap.note ? `${note}; ${tap.note}` : note };
    }
    const tests = parseAvaReport(input.report, input.workdir);
    // What only ava's main process knows: a file that crashed, or timed out, as TAP says.
    const crashes = tap.tests.filter((t) => t.status === 'error' && !tests.some((x) => x.id === t.id));
    const all = [...tests, ...crashes];
    return { source: 'json', tests: all, counts: countTests(all) };
  },
};
