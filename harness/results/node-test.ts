import path from 'node:path';
import { NODE_REPORTER_SOURCE, ownLines } from './node-reporter.js';
import { countTests, numberRepeats, firstLines, type RunnerAdapter, type TestCase } from './types.js';

interface NodeEvent {
  file: string | null;
  path: string[];
  type: string;
  status: 'passed' | 'failed' | 'skipped';
  durationMs?: number;
  message?: string;
}

/** `test/cart.test.js::suite > test`: the file relative to the workspace, then the describe path. */
export function parseNodeEvents(jsonl: string, workdir: string): TestCase[] {
  const tests: TestCase[] = [];
  // Only the harness reporter's lines: a test process may write into the file too.
  for (const line of ownLines(jsonl).lines) {
    let e: NodeEvent;
    try {
      e = JSON.parse(line) as NodeEvent;
    } catch {
      continue; // a torn last line when the run was killed
    }
    // A suite fails when its subtests fail (already counted) or when it breaks on its own (a hook).
    if (e.type === 'suite' && (e.status !== 'failed' || /subtests? failed$/.test(e.message ?? ''))) continue;
    const file = e.file
      ? path
          .relative(workdir, e.file.replace(/^file:\/\//, ''))
          .split(path.sep)
          .join('/')
      : '';
    const name = e.path.join(' > ');
    // A file that fails to load is reported as a failing test named after the file itself.
    const id = file && name !== e.file ? `${file}::${name}` : file || name;
    tests.push({
      id,
      status: e.type === 'suite' ? 'error' : e.status,
      ...(e.durationMs !== undefined ? { durationMs: e.durationMs } : {}),
      ...(e.message ? { message: firstLines(e.message)! } : {}),
    });
  }
  return numberRepeats(tests);
}

export const nodeTestAdapter: RunnerAdapter = {
  runner: 'node-test',
  infrastructure: ['package.json', '.node-options', '.npmrc'],
  prepare(ctx) {
    const reporter = `${ctx.scratchDir}/redgreen-node-reporter.mjs`;
    const reportFile = `${ctx.scratchDir}/node-test.jsonl`;
    // NODE_OPTIONS reaches `node --test` whatever wraps it (npm test, a shell script).
    const ours = `--test-reporter=${reporter} --test-reporter-destination=${reportFile} --test-reporter=spec --test-reporter-destination=stdout`;
    const nodeOptions = ctx.env.NODE_OPTIONS ? `${ctx.env.NODE_OPTIONS} ${ours}` : ours;
    return {
      command: ctx.command,
      env: { NODE_OPTIONS: nodeOptions },
      reportFile,
      files: [{ path: reporter, content: NODE_REPORTER_SOURCE }],
    };
  },
  parse(input) {
    if (input.report === null) return { source: 'none', tests: [], counts: countTests([]), note: 'node:test left no report' };
    const tests = parseNodeEvents(input.report, input.workdir);
    return { source: 'json', tests, counts: countTests(tests) };
  },
};
