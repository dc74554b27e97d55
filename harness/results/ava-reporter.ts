/**
 * Source of a module preloaded into ava's workers (`--require` through NODE_OPTIONS), which names
 * each test by its file: ava's TAP titles carry a file prefix only when several files run, and
 * one relative to their common folder (`sub › deep › passes`), so they change with the set of
 * files. Each ava worker (a thread, or a child process with --no-worker-threads) runs one test
 * file and sends its results to ava's main process as `{ ava: { type, title, … } }` messages; this
 * module reads them as they leave (MessagePort.postMessage in a thread, process.send in a child)
 * and appends one JSON line per result. It does nothing in any other process.
 */
export function avaReporterSource(reportFile: string): string {
  return `'use strict';
const fs = require('node:fs');
const wt = require('node:worker_threads');
const REPORT = ${JSON.stringify(reportFile)};
let file = (!wt.isMainThread && wt.workerData && wt.workerData.options && wt.workerData.options.file) || null;

function messageOf(err) {
  if (!err) return undefined;
  const details = (err.formattedDetails || []).map((d) => (d.label ? d.label + '\\n' : '') + d.formatted);
  return [err.message, ...details].filter(Boolean).join('\\n') || err.name || 'failed';
}

function observe(message) {
  const evt = message && message.ava;
  if (!file || !evt) return;
  let line = null;
  if (evt.type === 'selected-test' && (evt.skip || evt.todo)) line = { title: evt.title, status: 'skipped' };
  else if (evt.type === 'test-passed') line = { title: evt.title, status: 'passed' };
  else if (evt.type === 'test-failed') line = { title: evt.title, status: 'failed', message: messageOf(evt.err) };
  else if (evt.type === 'hook-failed') line = { title: evt.title, status: 'error', message: messageOf(evt.err) };
  else if (evt.type === 'uncaught-exception' || evt.type === 'unhandled-rejection') line = { title: null, status: 'error', message: messageOf(evt.err) };
  if (line) {
    try {
      fs.appendFileSync(REPORT, JSON.stringify({ file, ...line }) + '\\n');
    } catch {
      // The report is the harness's concern; the run must never suffer from it.
    }
  }
}

if (file) {
  const post = wt.MessagePort.prototype.postMessage;
  wt.MessagePort.prototype.postMessage = function (message, ...rest) {
    observe(message);
    return post.call(this, message, ...rest);
  };
} else if (typeof process.send === 'function' && /[\\\\/]ava[\\\\/]lib[\\\\/]worker[\\\\/]base\\.js$/.test(process.argv[1] || '')) {
  // A child process (ava forks lib/worker/base.js) learns its file from the options ava sends it first.
  const onOptions = (message) => {
    const options = message && message.ava && message.ava.type === 'options' && message.ava.options;
    if (!options) return;
    file = options.file || null;
    process.removeListener('message', onOptions);
  };
  process.on('message', onOptions);
  const send = process.send;
  process.send = function (message, ...rest) {
    observe(message);
    return send.call(this, message, ...rest);
  };
}
`;
}
