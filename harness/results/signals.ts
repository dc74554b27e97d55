import type { RunnerId } from '../fixtures/manifest.js';
import { ownLines } from './node-reporter.js';
import { PYTEST_PLUGIN_MODULE, pluginDisagreements } from './pytest-plugin.js';
import type { ParseInput, PreparedRun, TestReport } from './types.js';

/**
 * A second signal beside the runner's report, where the runner allows one: what the harness's
 * own collector, loaded before any project code, says about the same run. Each runner's check
 * returns the disagreements in words; results/check.ts turns any into a phase nobody can trust.
 * (The exit code, the first cross-check, is every runner's and lives in check.ts.)
 */
export function secondSignal(runner: RunnerId, prepared: PreparedRun, input: ParseInput, report: TestReport): string[] {
  if (runner === 'pytest') {
    const loaded = prepared.env.PYTEST_ADDOPTS?.includes(`-p ${PYTEST_PLUGIN_MODULE}`) ?? false;
    return loaded ? pluginDisagreements(input.report, report.tests) : [];
  }
  if (runner === 'node-test') return nodeReporterDisagreements(input.report, report);
  return [];
}

/** The node:test reporter's lines carry its nonce and end with a count (results/node-reporter.ts). */
function nodeReporterDisagreements(jsonl: string | null, report: TestReport): string[] {
  if (jsonl === null || !report.tests.length) return [];
  const own = ownLines(jsonl);
  if (!own.end) return ["the harness's node:test reporter never finished its report: the run ended early, or the file was rewritten"];
  const out: string[] = [];
  if (own.foreign) out.push(`${own.foreign} line(s) of the node:test report were not written by the harness's reporter`);
  if (own.end.lines !== own.lines.length) {
    out.push(`the harness's node:test reporter wrote ${own.end.lines} line(s), the report holds ${own.lines.length} of them`);
  }
  return out;
}
