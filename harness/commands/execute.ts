import { discoverFixtures, type Discovery, type Fixture } from '../fixtures/load.js';
import { harnessVersion, newRunId, resolvePaths } from '../config/paths.js';
import type { RunOptions } from '../config/options.js';
import type { PatchProvider } from '../pipeline/provider.js';
import type { FixtureResult } from '../pipeline/result.js';
import { runFixtures } from '../pipeline/scheduler.js';
import { summarize, writeReport, type Report } from '../reporters/report.js';
import { renderTable } from '../reporters/table.js';
import { TerminalReporter } from '../reporters/terminal.js';
import { TranscriptWriter } from '../transcripts/writer.js';
import { createBackend } from './backend.js';
import { exitCodeFor } from './exit-code.js';

export interface ExecuteInput {
  mode: 'selfcheck' | 'run';
  ids: string[];
  options: RunOptions;
  provider: PatchProvider;
  baseline?: boolean;
  /** Fixtures already loaded (several runs over the same set). */
  discovery?: Discovery;
  /** Appended to the run id, to tell runs of several models apart. */
  label?: string;
}

export interface ExecuteOutcome {
  report: Report;
  reportPath: string;
  transcriptDir: string;
  exitCode: number;
  fixtures: Fixture[];
}

/**
 * Runs fixtures end to end and writes the transcript and the report. Ctrl-C (or SIGTERM) aborts
 * every sandbox, keeps what finished, and ends with exit code 130; a second Ctrl-C exits at once.
 */
export async function execute(input: ExecuteInput): Promise<ExecuteOutcome> {
  const { options } = input;
  const paths = resolvePaths(options);
  const { fixtures, broken } = input.discovery ?? (await discoverFixtures(paths, input.ids));
  const runId = newRunId(input.mode, input.label);
  const backend = await createBackend(options, paths);
  const writer = await TranscriptWriter.open(paths.transcriptsDir, {
    runId,
    mode: input.mode,
    backend: backend.name,
    options: { concurrency: options.concurrency, repeat: options.repeat, ids: input.ids, subject: input.provider.subject, baseline: input.baseline ?? true },
    fixtureIds: [...broken.map((b) => b.id), ...fixtures.map((f) => f.id)],
    version: harnessVersion(),
  });
  const terminal = new TerminalReporter(fixtures.length + broken.length);
  const controller = new AbortController();
  let interrupts = 0;
  const onSignal = (sig: NodeJS.Signals) => {
    interrupts++;
    if (interrupts > 1) process.exit(130);
    process.stderr.write(`\n${sig}: stopping — destroying sandboxes and writing what finished (again to quit at once)\n`);
    controller.abort();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  const startedAt = new Date();
  let results: FixtureResult[] = [];
  let unfinished: string[] = [];
  try {
    ({ results, unfinished } = await runFixtures({
      mode: input.mode,
      provider: input.provider,
      baseline: input.baseline ?? true,
      fixtures,
      broken,
      backend,
      runId,
      concurrency: options.concurrency,
      repeat: options.repeat,
      signal: controller.signal,
      observer: {
        onFixtureStart: (id) => {
          writer.onFixtureStart(id);
          terminal.onFixtureStart(id);
        },
        onEvent: (id, e) => {
          writer.onEvent(id, e);
          terminal.onEvent(id, e);
        },
        onFixtureEnd: async (id, r) => {
          await writer.onFixtureEnd(id, r);
          terminal.onFixtureEnd(id, r);
        },
      },
    }));
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    terminal.close();
  }
  const interrupted = controller.signal.aborted;
  await writer.close(interrupted ? 'interrupted' : 'completed', unfinished);
  const finishedAt = new Date();
  const report: Report = {
    schema: 'redgreen.report/1',
    runId,
    mode: input.mode,
    subject: input.provider.subject,
    backend: backend.name,
    concurrency: options.concurrency,
    repeat: options.repeat,
    startedAt: startedAt.toISOString(),
    finishedAt: finishedAt.toISOString(),
    durationMs: finishedAt.getTime() - startedAt.getTime(),
    interrupted,
    unfinished,
    summary: summarize(results),
    fixtures: results,
  };
  const reportPath = await writeReport(paths.reportsDir, report);
  return { report, reportPath, transcriptDir: writer.dir, exitCode: exitCodeFor(results, interrupted), fixtures };
}

/** The table and where the files are, or the report as JSON (an object per run, in `runs` when several). */
export function printOutcomes(outcomes: readonly ExecuteOutcome[], json: boolean): void {
  if (json) {
    const reports = outcomes.map((o) => o.report);
    process.stdout.write(`${JSON.stringify(reports.length === 1 ? reports[0] : { runs: reports }, null, 2)}\n`);
    return;
  }
  for (const o of outcomes) {
    if (outcomes.length > 1) process.stdout.write(`\n== ${o.report.subject} ==\n`);
    process.stdout.write(`${renderTable(o.report)}\nreport: ${o.reportPath}\ntranscript: ${o.transcriptDir}\n`);
  }
}

/** The most serious exit code of several runs. */
export function worstExitCode(codes: readonly number[]): number {
  const rank = [0, 1, 2, 3, 130];
  return codes.reduce((a, c) => (rank.indexOf(c) > rank.indexOf(a) ? c : a), 0);
}
