import { setMaxListeners } from 'node:events';
import { discoverFixtures, type Discovery, type Fixture } from '../fixtures/load.js';
import type { Selection } from '../fixtures/select.js';
import { harnessVersion, newRunId, resolvePaths } from '../config/paths.js';
import type { RunOptions } from './options.js';
import type { PatchProvider } from '../pipeline/provider.js';
import type { FixtureResult } from '../pipeline/result.js';
import { runFixtures } from '../pipeline/scheduler.js';
import { sandboxesPerFixture } from '../pipeline/fixture-run.js';
import { summarize, writeReport, type Report } from '../reporters/report.js';
import type { RunInfo } from '../reporters/reporter.js';
import { PatchSaver } from '../reporters/patches.js';
import { loadResumePoint } from '../transcripts/resume.js';
import { TranscriptWriter } from '../transcripts/writer.js';
import { EXPECTED } from '../scoring/verdicts.js';
import { createBackend } from './backend.js';
import type { CommandContext } from './context.js';
import path from 'node:path';
import { SetupCache } from '../pipeline/setup-cache.js';
import type { SharedBaselines } from '../pipeline/baseline-phase.js';
import { gcHostFolders } from '../sandbox/host/gc.js';
import { exitCodeFor } from './exit-code.js';
import { prepareResume, recordedShard } from './resume-point.js';
import { resumeSettings, type RunSettings } from './resume-settings.js';
import { RunSession } from './session.js';

export interface ExecuteInput {
  mode: 'selfcheck' | 'run';
  /** The fixtures to run (ids, globs, tags and shard already applied). */
  selection: Selection;
  options: RunOptions;
  provider: PatchProvider;
  ctx: CommandContext;
  baseline?: boolean;
  /** `run --strict`: patches the audit flags are rejected. */
  strict?: boolean;
  /** Appended to the run id, to tell runs of several models apart (and named in progress lines). */
  label?: string;
  /** Fixtures of the selection the patch source has no patch for (they are not run). */
  notSubmitted?: string[];
  /** Continue an interrupted run: its finished fixtures are kept, the others run again. */
  resume?: { runId: string; force: boolean };
  /** Several models graded by one command: each fixture's setup and RED baseline once, for all of them. */
  baselines?: SharedBaselines;
}

export interface ExecuteOutcome {
  run: RunInfo;
  report: Report;
  reportPath: string;
  transcriptDir: string;
  exitCode: number;
  fixtures: Fixture[];
}

/**
 * Runs fixtures end to end and writes the transcript and report.json; reporters hear every step.
 * Ctrl-C (or SIGTERM, or the caller's AbortSignal) aborts every sandbox, keeps what finished, and
 * ends with exit code 130; `--bail N` stops the same way after N fixtures missed (exit code 1).
 */
export async function execute(input: ExecuteInput): Promise<ExecuteOutcome> {
  const { reporter } = input.ctx;
  const paths = resolvePaths(input.options);
  const point = input.resume ? await loadResumePoint(paths.transcriptsDir, input.resume.runId) : null;
  const settings: RunSettings = point
    ? resumeSettings(point.state, {
        ids: input.selection.explicit ? input.selection.ids : [],
        backend: input.options.backend,
        repeat: input.options.repeat,
        force: input.resume!.force,
      })
    : { ids: input.selection.ids, backend: input.options.backend ?? 'local', repeat: input.options.repeat ?? 1 };
  const options = { ...input.options, backend: settings.backend, repeat: settings.repeat };
  const same = settings.ids.length === input.selection.ids.length && settings.ids.every((id) => input.selection.ids.includes(id));
  // discoverFixtures reads "no ids" as "all of them": a resumed run of nothing (an empty shard) loads nothing.
  const reload = async () => (settings.ids.length ? discoverFixtures(paths, settings.ids) : { fixtures: [], broken: [] });
  const discovery = onlyThese(same ? input.selection.discovery : await reload(), settings.ids);
  const resumed = point ? await prepareResume(point, input, discovery) : null;
  const shard = resumed ? recordedShard(resumed.state.options.shard) : input.selection.shard;
  const runId = resumed?.state.runId ?? newRunId(input.mode, input.label);
  const kept = resumed?.kept ?? new Map<string, FixtureResult>();
  const fixtures = discovery.fixtures.filter((f) => !kept.has(f.id));
  const broken = discovery.broken.filter((b) => !kept.has(b.id));
  const startedAt = resumed ? new Date(resumed.state.startedAt) : new Date();
  const info: RunInfo = {
    runId,
    mode: input.mode,
    subject: input.provider.subject,
    ...(input.label ? { model: input.label } : {}),
    backend: settings.backend,
    concurrency: options.concurrency,
    total: fixtures.length + broken.length,
    kept: kept.size,
    fixturesDir: paths.fixturesDir,
    ...(shard ? { shard: { index: shard.index, count: shard.count } } : {}),
  };
  // The start line comes first: creating a backend (an engine, a remote service) can take a while.
  reporter.onRunStart(info);
  const session = new RunSession('destroying sandboxes and writing what finished', {
    handleSignals: input.ctx.handleSignals,
    ...(input.ctx.signal ? { signal: input.ctx.signal } : {}),
    warn: (m) => reporter.onLog(m, 'warning'),
  });
  // --bail: a second reason to stop, after the run's own (Ctrl-C, the caller's signal).
  const bail = new AbortController();
  let missed = 0;
  const ran = await session.run(async (s) => {
    const backend = await s.step(
      'backend',
      () => createBackend(options, paths),
      (b) => b?.close?.(),
    );
    // Leftovers of runs that were killed (kill -9, power loss): their processes and folders.
    await s.step('gc', () => gcHostFolders());
    const perFixture = sandboxesPerFixture({
      mode: input.mode,
      agent: input.provider.kind === 'agent',
      sharedBaselines: (input.baseline ?? true) && !!input.baselines,
    });
    await s.step('open', () => backend.open?.(runId, { sandboxes: fixtures.length * perFixture }));
    const writer = await s.step('transcript', () =>
      resumed
        ? TranscriptWriter.reopen(resumed.dir, resumed.state)
        : TranscriptWriter.open(paths.transcriptsDir, {
            runId,
            mode: input.mode,
            backend: backend.name,
            options: {
              concurrency: options.concurrency,
              repeat: options.repeat,
              ids: settings.ids,
              subject: input.provider.subject,
              baseline: input.baseline ?? true,
              ...(shard ? { shard } : {}),
            },
            fixtureIds: [...broken.map((b) => b.id), ...fixtures.map((f) => f.id)],
            version: harnessVersion(),
          }),
    );
    // A run's patches are an agent's or a predictions file's work, kept to be read and graded again;
    // selfcheck's are the fixtures' own oracles, already in the project (and in the transcript).
    const patches = input.mode === 'run' ? new PatchSaver(path.join(paths.reportsDir, runId, 'patches')) : null;
    const outcome = await runFixtures({
      mode: input.mode,
      provider: input.provider,
      baseline: input.baseline ?? true,
      strict: input.strict ?? false,
      fixtures,
      broken,
      backend,
      runId,
      concurrency: options.concurrency,
      repeat: options.repeat,
      signal: stopOn(s.signal, bail.signal),
      setupCache: options.cache ? SetupCache.under(paths.cacheDir) : null,
      baselines: input.baselines ?? null,
      observer: {
        onFixtureStart: (id) => {
          writer.onFixtureStart(id);
          reporter.onFixtureStart(info, id);
        },
        onEvent: (id, e) => {
          writer.onEvent(id, e);
          reporter.onFixtureEvent(info, id, e);
          patches?.onEvent(id, e);
        },
        onFixtureEnd: async (id, r) => {
          await writer.onFixtureEnd(id, r);
          reporter.onFixtureEnd(info, r);
          if (!EXPECTED.has(r.verdict) && ++missed >= (options.bail ?? Infinity)) bail.abort();
        },
      },
    });
    return { ...outcome, writer, backendName: backend.name };
  });
  const { writer, unfinished } = ran;
  let results = ran.results;
  if (kept.size) {
    // Back in the order of the fixture set, as an uninterrupted run reports them.
    const order = [...discovery.broken.map((b) => b.id), ...discovery.fixtures.map((f) => f.id)];
    const byId = new Map([...kept, ...results.map((r) => [r.fixtureId, r] as const)]);
    results = order.flatMap((id) => byId.get(id) ?? []);
  }
  const interrupted = session.interrupted;
  const bailed = !interrupted && bail.signal.aborted;
  // A bailed run can be finished with --resume, like an interrupted one.
  await writer.close(interrupted || bailed ? 'interrupted' : 'completed', unfinished);
  const finishedAt = new Date();
  const report: Report = {
    schema: 'redgreen.report/1',
    runId,
    mode: input.mode,
    subject: input.provider.subject,
    backend: ran.backendName,
    concurrency: options.concurrency,
    repeat: options.repeat,
    startedAt: startedAt.toISOString(),
    finishedAt: finishedAt.toISOString(),
    durationMs: finishedAt.getTime() - startedAt.getTime(),
    interrupted,
    unfinished,
    ...(input.notSubmitted?.length ? { notSubmitted: input.notSubmitted } : {}),
    ...(bailed ? { bailed: options.bail! } : {}),
    ...(shard ? { shard } : {}),
    summary: summarize(results),
    fixtures: results,
  };
  const reportPath = await writeReport(paths.reportsDir, report);
  const outcome = {
    run: info,
    report,
    reportPath,
    transcriptDir: writer.dir,
    exitCode: exitCodeFor(results, interrupted),
    fixtures: discovery.fixtures,
  };
  await reporter.onRunEnd(outcome);
  return outcome;
}

/** Aborted when either is; one abort listener per running command, so no listener limit (as the session's own signal). */
function stopOn(...signals: AbortSignal[]): AbortSignal {
  const any = AbortSignal.any(signals);
  setMaxListeners(0, any);
  return any;
}

/** The fixtures of a discovery that a run is made of. */
function onlyThese(d: Discovery, ids: readonly string[]): Discovery {
  return { ...d, fixtures: d.fixtures.filter((f) => ids.includes(f.id)), broken: d.broken.filter((b) => ids.includes(b.id)) };
}

/** The most serious exit code of several runs. */
export function worstExitCode(codes: readonly number[]): number {
  const rank = [0, 1, 2, 3, 130];
  return codes.reduce((a, c) => (rank.indexOf(c) > rank.indexOf(a) ? c : a), 0);
}
