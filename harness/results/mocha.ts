import path from 'node:path';
import { appendArgs } from './append-args.js';
import { loadErrorEntry } from './load-error.js';
import { mochaReporterSource } from './mocha-reporter.js';
import { countTests, firstLines, numberRepeats, type ParseInput, type RunnerAdapter, type TestCase, type TestReport } from './types.js';

interface MochaEntry {
  file: string | null;
  path: string[];
  hook?: string;
  status: 'passed' | 'failed' | 'error' | 'skipped';
  durationMs?: number;
  message?: string;
}

const relative = (workdir: string, file: string) => path.relative(workdir, file).split(path.sep).join('/');

/** `test/cart.test.js::describe > test`; a failed hook is an error at its suite (`test/a.js::suite`). */
export function parseMochaReport(json: string, workdir: string): TestCase[] {
  const doc = JSON.parse(json) as { tests?: MochaEntry[] };
  const tests = (doc.tests ?? []).map((e): TestCase => {
    const file = e.file ? relative(workdir, e.file) : '';
    const name = e.path.join(' > ');
    const id = file && name ? `${file}::${name}` : file || name || '(root)';
    const message = e.hook ? `${e.hook} failed: ${e.message ?? ''}`.trim() : e.message;
    return {
      id,
      status: e.status,
      ...(typeof e.durationMs === 'number' ? { durationMs: Math.round(e.durationMs) } : {}),
      ...(message ? { message: firstLines(message)! } : {}),
    };
  });
  return numberRepeats(tests);
}

/** Mocha's own frames while it loads the test files (its ESM loader since mocha 9, require before). */
const LOADING_FILES = /\bat (?:async )?(?:exports\.loadFilesAsync|Mocha\.loadFiles)\b/;

/**
 * A file that fails to load stops mocha before any test runs (no report): one broken entry named
 * after the file. Mocha 10.8 and later say "Exception during run:"; older ones (10.2, say) print
 * the error's stack alone, which then shows mocha loading its files.
 */
export function mochaLoadError(stderr: string, workdir: string): TestCase | null {
  const at = stderr.indexOf('Exception during run:');
  if (at >= 0) return loadErrorEntry(stderr.slice(at + 'Exception during run:'.length), workdir, 'mocha');
  return LOADING_FILES.test(stderr) ? loadErrorEntry(stderr, workdir, 'mocha') : null;
}

function parse(input: ParseInput): TestReport {
  if (input.report === null) {
    const broken = mochaLoadError(input.stderr, input.workdir);
    if (broken) return { source: 'stdout', tests: [broken], counts: countTests([broken]), note: 'mocha stopped before running any test' };
    return {
      source: 'none',
      tests: [],
      counts: countTests([]),
      note: "mocha left no report (is the harness's --reporter on the mocha command?)",
    };
  }
  try {
    const tests = parseMochaReport(input.report, input.workdir);
    return { source: 'json', tests, counts: countTests(tests) };
  } catch (e) {
    return { source: 'none', tests: [], counts: countTests([]), note: `unreadable mocha report: ${(e as Error).message}` };
  }
}

export const mochaAdapter: RunnerAdapter = {
  runner: 'mocha',
  infrastructure: ['package.json', '.mocharc*', 'test/mocha.opts', 'babel.config.*', '.babelrc*', 'tsconfig.json', '.npmrc'],
  prepare(ctx) {
    const reporter = `${ctx.scratchDir}/redgreen-mocha-reporter.cjs`;
    const reportFile = `${ctx.scratchDir}/mocha.json`;
    // A reporter is named on mocha's command line (it wins over .mocharc): the command must end
    // with the mocha invocation (`npx mocha`, `npm test`), which `validate` checks.
    return {
      command: appendArgs(ctx.command, `--reporter ${reporter}`),
      env: {},
      reportFile,
      files: [{ path: reporter, content: mochaReporterSource(reportFile) }],
    };
  },
  parse,
};
