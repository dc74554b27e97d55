import path from 'node:path';
import { stripAnsi } from '../errors.js';
import { loadErrorEntry } from './load-error.js';
import { UVU_REPORT_END, uvuReporterSource } from './uvu-reporter.js';
import { countTests, firstLines, numberRepeats, type ParseInput, type RunnerAdapter, type TestCase, type TestReport } from './types.js';

interface UvuLine {
  type?: string;
  ran?: boolean;
  file?: string | null;
  suite?: string;
  test?: string | null;
  status?: 'passed' | 'failed' | 'error';
  message?: string;
}

/** `tests/math.test.js::suite > test` (`tests/math.test.js::test` for uvu's default suite). */
export function parseUvuReport(jsonl: string, workdir: string): { tests: TestCase[]; ran: boolean | null } {
  const tests: TestCase[] = [];
  let ran: boolean | null = null;
  for (const line of jsonl.split('\n')) {
    if (!line.trim()) continue;
    let e: UvuLine;
    try {
      e = JSON.parse(line) as UvuLine;
    } catch {
      continue; // a torn last line when the run was killed
    }
    if (e.type === UVU_REPORT_END) {
      ran = ran === true || e.ran === true;
      continue;
    }
    const file = e.file ? path.relative(workdir, e.file).split(path.sep).join('/') : '';
    const name = [e.suite, e.test].filter(Boolean).join(' > ');
    tests.push({
      id: file && name ? `${file}::${name}` : file || name || '(uvu)',
      status: e.status ?? 'error',
      ...(e.message ? { message: firstLines(e.message)! } : {}),
    });
  }
  return { tests: numberRepeats(tests), ran };
}

/**
 * Without the preloaded module's report, uvu's own output still names its failures (`FAIL suite
 * "name"` and the message under it), never its passes: a fallback that can show a run failing,
 * with ids `suite > name` that name no file.
 */
export function uvuFailuresFromStdout(stdout: string): TestCase[] {
  const lines = stripAnsi(stdout).split('\n');
  const tests: TestCase[] = [];
  lines.forEach((line, i) => {
    const m = /^\s*FAIL\s+(?:(.*?)\s+)?"(.*)"\s*$/.exec(line);
    if (!m) return;
    const end = lines.findIndex((l, j) => j > i && /^\s*FAIL\s/.test(l));
    const message = firstLines(lines.slice(i + 1, end < 0 ? undefined : end).join('\n'));
    tests.push({ id: [m[1], m[2]].filter(Boolean).join(' > '), status: 'failed', ...(message ? { message } : {}) });
  });
  return numberRepeats(tests);
}

const NO_REPORT = "uvu left no report (the harness's preloaded module did not run)";

function parse(input: ParseInput): TestReport {
  const printed = input.report === null ? uvuFailuresFromStdout(input.stdout) : [];
  if (printed.length) {
    return { source: 'stdout', tests: printed, counts: countTests(printed), note: `${NO_REPORT}: only the failures uvu printed are known` };
  }
  const { tests, ran } = input.report === null ? { tests: [], ran: null } : parseUvuReport(input.report, input.workdir);
  // uvu loads every test file before it runs any: one that does not load ends the run with its
  // error on stderr and no test run.
  if (!tests.length && input.exitCode !== 0 && ran !== true && input.stderr.trim()) {
    const broken = loadErrorEntry(input.stderr, input.workdir, 'uvu');
    return { source: 'stdout', tests: [broken], counts: countTests([broken]), note: 'uvu stopped before running any test' };
  }
  if (input.report === null) return { source: 'none', tests: [], counts: countTests([]), note: NO_REPORT };
  return { source: 'json', tests, counts: countTests(tests), ...(ran === false ? { note: 'uvu did not finish its run' } : {}) };
}

/** uvu prints no names for passing tests and has no reporter API: a preloaded module records them. */
export const uvuAdapter: RunnerAdapter = {
  runner: 'uvu',
  infrastructure: ['package.json', '.npmrc'],
  prepare(ctx) {
    const reporter = `${ctx.scratchDir}/redgreen-uvu-reporter.cjs`;
    const reportFile = `${ctx.scratchDir}/uvu.jsonl`;
    // NODE_OPTIONS reaches the node process that runs uvu whatever starts it (npx uvu, npm test, node test/x.js).
    const ours = `--require=${reporter}`;
    return {
      command: ctx.command,
      env: { NODE_OPTIONS: ctx.env.NODE_OPTIONS ? `${ctx.env.NODE_OPTIONS} ${ours}` : ours },
      reportFile,
      files: [{ path: reporter, content: uvuReporterSource(reportFile) }],
    };
  },
  parse,
};
