import { callerFileSource } from './caller-file.js';

/** The type of the line the uvu reporter writes once uvu has run its suites. */
export const UVU_REPORT_END = 'redgreen:end';

/**
 * Source of a module preloaded into uvu (`--require` through NODE_OPTIONS) that records each
 * test's file, suite and name, which uvu never prints for a passing test (it prints a dot).
 * uvu has no reporter API, so it watches what uvu itself does, through its documented globals:
 * - `UVU_QUEUE` (created here before uvu reads it): every suite's `run()` is pushed there while
 *   its file loads, so the stack at that push names the test file;
 * - uvu sets `state.__test__` to each test's name before running it (a setter on
 *   Object.prototype sees it), and prints `• ` or `✘ ` after it, then `(passed / total)`;
 * - a failure's message is in the block uvu prints after the suite (`FAIL suite "name"`).
 * A suite whose `before` hook threw prints `(0 / N)` and exits 0 (uvu swallows the error): its
 * tests that never started are one error entry at the suite.
 */
export function uvuReporterSource(reportFile: string): string {
  return `'use strict';
const fs = require('node:fs');
const { fileURLToPath } = require('node:url');
const REPORT = ${JSON.stringify(reportFile)};
const ANSI = /\\u001b\\[[0-9;]*m/g;
const emit = (o) => fs.appendFileSync(REPORT, JSON.stringify(o) + '\\n');

${callerFileSource('uvu')}

let run = null; // the suite run in progress: { file, suite, started, results, failures }
let test = null; // the test in progress
let ended = false;
const finished = [];

function flush(messages) {
  for (const r of finished.splice(0)) {
    const failures = r.results.filter((t) => t.status === 'failed');
    failures.forEach((t, i) => (t.message = (messages && messages[i]) || t.message));
    for (const t of r.results) emit(t);
  }
}

function wrap(fn, file) {
  return async function redgreenRun() {
    flush();
    run = { file, suite: '', started: 0, results: [], total: null };
    try {
      return await fn.apply(this, arguments);
    } finally {
      const r = run;
      run = test = null;
      // Tests that never started: a before hook threw (uvu reports the suite as passed).
      if (r.total !== null && r.started < r.total) {
        const n = r.total - r.started;
        r.results.push({ file: r.file, suite: r.suite, test: null, status: 'error',
          message: n + ' of ' + r.total + ' test(s) never ran: a before hook failed, or the suite stopped' });
      }
      finished.push(r);
    }
  };
}

class Group extends Array {
  push(...items) {
    return super.push(...items.map((x) => (typeof x === 'function' ? wrap(x, callerFile()) : x)));
  }
}
class Queue extends Array {
  push(...groups) {
    return super.push(...groups.map((g) => (Array.isArray(g) && !(g instanceof Group) ? Group.from(g) : g)));
  }
}
globalThis.UVU_QUEUE = new Queue();

const names = new WeakMap();
Object.defineProperty(Object.prototype, '__test__', {
  configurable: true,
  get() {
    return names.get(this);
  },
  set(name) {
    names.set(this, name);
    if (!run || !name) return;
    run.started++;
    test = { file: run.file, suite: this.__suite__ || run.suite, test: String(name), status: 'error', message: 'the test never finished' };
    run.results.push(test);
  },
});

const write = process.stdout.write;
process.stdout.write = function redgreenWrite(chunk) {
  try {
    const text = String(chunk).replace(ANSI, '');
    if (run && test && (text === '• ' || text === '✘ ')) {
      test.status = text === '• ' ? 'passed' : 'failed';
      test.message = undefined;
      test = null;
    } else if (run) {
      const count = /^\\s*\\((\\d+) \\/ (\\d+)\\)\\s*$/.exec(text);
      if (count) run.total = Number(count[2]);
      else if (!run.started && text.endsWith(' ') && text.trim()) run.suite = text.trim();
    } else if (/^\\s*FAIL\\s/.test(text) && finished.length) {
      // The failures of the suites that just ran, in order: FAIL <suite> "name", then the message.
      const blocks = text.split(/\\n+(?=[ \\t]*FAIL\\s)/).filter((b) => /^[ \\t]*FAIL\\s/.test(b)).map((b) => b.split('\\n').slice(1).join('\\n'));
      flush(blocks.map((b) => b.trim()));
    } else if (/^\\s*Total:/.test(text)) {
      flush();
      ended = true;
    }
  } catch {
    // The report is the harness's concern; the run's output must never suffer from it.
  }
  return write.apply(this, arguments);
};

process.on('exit', () => {
  // npx and npm run node too, and load this module: only the process that ran uvu reports.
  if (!globalThis.UVU_QUEUE.length) return;
  flush();
  emit({ type: '${UVU_REPORT_END}', ran: ended });
});
`;
}
