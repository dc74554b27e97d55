/**
 * Source of a mocha reporter, written into the sandbox's scratch folder and named with
 * `--reporter`. mocha's built-in json reporter joins a test's titles with spaces (`outer inner
 * deep`), so a describe block cannot be told from its test, and it writes to stdout among the
 * tests' own output on mochas before 10. This one records each test's file and title path, and
 * failed hooks (which mocha reports in place of the tests they stop), and writes them to the
 * report file when the run ends. The run's spec output still goes to stdout for the transcript,
 * through the mocha that loaded it.
 */
export function mochaReporterSource(reportFile: string): string {
  return `'use strict';
const fs = require('node:fs');
const REPORT = ${JSON.stringify(reportFile)};

function titles(runnable) {
  if (typeof runnable.titlePath === 'function') return runnable.titlePath();
  const out = [];
  for (let r = runnable; r && !r.root; r = r.parent) out.unshift(r.title);
  return out;
}

function RedgreenMochaReporter(runner, options) {
  const tests = [];
  const record = (t, status, err) => {
    const hook = t.type === 'hook';
    // A failed hook stands for the tests of its suite that it stopped: one entry at the suite, whose
    // titles are the hook's own without its last (also with --parallel, where the suite arrives
    // serialised without its titles).
    tests.push({
      file: t.file || (t.parent && t.parent.file) || null,
      path: hook ? titles(t).slice(0, -1) : titles(t),
      hook: hook ? String(t.title).replace(/ for ".*"$/, '') : undefined,
      status,
      durationMs: typeof t.duration === 'number' ? t.duration : undefined,
      message: err ? String((err && (err.stack || err.message)) || err).slice(0, 4000) : undefined,
    });
  };
  runner.on('pass', (t) => record(t, 'passed'));
  runner.on('pending', (t) => record(t, 'skipped'));
  runner.on('fail', (t, err) => record(t, t.type === 'hook' ? 'error' : 'failed', err));
  runner.once('end', () => fs.writeFileSync(REPORT, JSON.stringify({ tests }) + '\\n'));
  try {
    const Mocha = require(require.resolve('mocha', { paths: [process.cwd()] }));
    new Mocha.reporters.Spec(runner, options);
  } catch {
    // A mocha that cannot be found from the workspace: the report is still written.
  }
}
module.exports = RedgreenMochaReporter;
`;
}
