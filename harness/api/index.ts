/**
 * redgreen as a library: the same code the CLI runs, with the same options (one zod schema per
 * command), returning the report object instead of printing it. Nothing is printed unless a
 * reporter is asked for (`reporter: ['default']`), nothing process-wide is touched, and an
 * AbortSignal stops a run as Ctrl-C does. Heavy modules load when a function is called.
 */
import type { Comparison } from '../reporters/compare.js';
import type { Report } from '../reporters/report.js';
import type { Reporter } from '../reporters/reporter.js';
import type { VerifyResult } from '../commands/replay.js';
import type { ZodObject, ZodType } from 'zod';
import type { ReporterSpec } from '../commands/reporter-spec.js';
import { listenerReporter, type ProgressEvent } from './progress.js';
import type { CompareOptions, MergeOptions, RedgreenConfig, ReplayOptions, RunOptions, SelfcheckOptions } from './types.js';

export type * from './types.js';
export type { ProgressEvent } from './progress.js';
export type { Report, Summary } from '../reporters/report.js';
export type { Reporter, RunInfo, RunEnd } from '../reporters/reporter.js';
export type { FixtureResult, Phase } from '../pipeline/result.js';
export type { FixtureEvent } from '../pipeline/events.js';
export type { Verdict } from '../scoring/verdicts.js';
export type { Comparison } from '../reporters/compare.js';
export type { VerifyResult } from '../commands/replay.js';
export type { FixtureDrift } from '../commands/replay-verify.js';
export type { BackendDescriptor, BackendContext, Probe, GcRequest, GcOutcome } from '../sandbox/registry.js';
export type { Sandbox, SandboxBackend, SandboxSpec, ExecOptions, ExecResult } from '../sandbox/core/types.js';
export type { RunnerAdapter, PrepareContext, PreparedRun, ParseInput, TestReport, TestCase, TestCounts } from '../results/types.js';
export { RedgreenError, type ErrorCode } from '../errors.js';
export { registerBackend } from '../sandbox/backends.js';
export { defineBackend } from '../sandbox/registry.js';
export { registerRunner } from '../results/index.js';
export { countTests } from '../results/types.js';

/**
 * Types a redgreen.config.{ts,mjs,js}: `export default defineConfig({ … })`. A backend the config
 * registers brings options of its own: `defineConfig<{ region: string }>({ backend: 'mine', region: 'eu' })`.
 */
export function defineConfig<Extra extends object = {}>(config: RedgreenConfig & NoInfer<Extra>): RedgreenConfig & Extra {
  return config;
}

/** The options a command runs with (config file, then the caller's), and its reporters. */
async function prepare<S extends ZodObject<{ reporter: ZodType<ReporterSpec[] | undefined> }>>(schema: () => S, given: object) {
  const { signal, onProgress, ...rest } = given as { signal?: AbortSignal; onProgress?: (e: ProgressEvent) => void };
  const [{ resolveOptions }, { makeReporters }] = await Promise.all([
    import('../commands/resolve-options.js'),
    import('../commands/reporters.js'),
  ]);
  const options = await resolveOptions(schema, rest as Record<string, unknown>, 'api');
  const reporters: Reporter[] = makeReporters(options.reporter as ReporterSpec[] | undefined, { cli: false, json: false });
  if (onProgress) reporters.push(listenerReporter(onProgress));
  return { options, reporters, control: { handleSignals: false, ...(signal ? { signal } : {}) } };
}

/**
 * Every selected fixture RED → oracle → GREEN (`redgreen selfcheck`). Resolves to the run's report,
 * also when stopped by the signal (`interrupted: true`). A registered backend's own options go in
 * the same object, typed by the type argument: `selfcheck<{ region: string }>({ backend: 'mine', region: 'eu' })`.
 */
export async function selfcheck<Extra extends object = {}>(
  options: SelfcheckOptions & NoInfer<Extra> = {} as SelfcheckOptions & Extra,
): Promise<Report> {
  const [{ selfcheckOptionsSchema }, { selfcheck: command }, { withReporters }] = await Promise.all([
    import('../commands/options.js'),
    import('../commands/selfcheck.js'),
    import('../commands/invoke.js'),
  ]);
  const p = await prepare(selfcheckOptionsSchema, options);
  const [outcome] = await withReporters(p.reporters, p.control, async (ctx) => [await command(p.options, ctx)]);
  return outcome!.report;
}

/** Grades patches (`patches`) or an agent (`agent`) (`redgreen run`): one report per model (a predictions file may hold several). */
export async function run<Extra extends object = {}>(options: RunOptions & NoInfer<Extra>): Promise<Report[]> {
  const [{ agentRunOptionsSchema }, { run: command }, { withReporters }] = await Promise.all([
    import('../commands/options.js'),
    import('../commands/run.js'),
    import('../commands/invoke.js'),
  ]);
  const p = await prepare(agentRunOptionsSchema, options);
  return (await withReporters(p.reporters, p.control, (ctx) => command(p.options, ctx))).map((o) => o.report);
}

/**
 * A recorded run (`redgreen replay`): with `verify: true`, re-executed in fresh sandboxes and
 * compared (drift per fixture); without, its story as text.
 */
export async function replay(transcript: string, options: ReplayOptions & { verify: true }): Promise<VerifyResult>;
export async function replay(transcript: string, options?: ReplayOptions & { verify?: false }): Promise<string>;
export async function replay(transcript: string, options: ReplayOptions = {}): Promise<VerifyResult | string> {
  const [{ replayOptionsSchema, verifyTranscript, replayText }, { resolveOptions }] = await Promise.all([
    import('../commands/replay.js'),
    import('../commands/resolve-options.js'),
  ]);
  const { signal, onProgress, ...rest } = options;
  const parsed = await resolveOptions(replayOptionsSchema, rest, 'api');
  if (!parsed.verify) return replayText(transcript, parsed);
  const log = onProgress ? (message: string) => onProgress({ type: 'log', level: 'info', message }) : undefined;
  return verifyTranscript(transcript, parsed, { handleSignals: false, ...(signal ? { signal } : {}), ...(log ? { log } : {}) });
}

/** Two runs' verdict changes (regressions first), test status changes and timing changes (`redgreen compare`). */
export async function compare(runA: string, runB: string, options: CompareOptions = {}): Promise<Comparison> {
  const [{ CompareOptionsSchema, compareRuns }, { resolveOptions }] = await Promise.all([
    import('../commands/compare.js'),
    import('../commands/resolve-options.js'),
  ]);
  return compareRuns(runA, runB, await resolveOptions(() => CompareOptionsSchema, options, 'api'));
}

/** The shards' reports (`--shard i/n`) as one run's report, written like any run's (`redgreen report merge`). */
export async function mergeReports(runs: readonly string[], options: MergeOptions = {}): Promise<Report> {
  const [{ MergeOptionsSchema, reportMerge }, { resolveOptions }] = await Promise.all([
    import('../commands/report-merge.js'),
    import('../commands/resolve-options.js'),
  ]);
  return (await reportMerge(runs, await resolveOptions(() => MergeOptionsSchema, options, 'api'))).report;
}
