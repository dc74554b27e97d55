import { z } from 'zod';
import { runOptionsSchema, RunBaseSchema } from './options.js';
import { resolvePaths } from '../config/paths.js';
import { RedgreenError } from '../errors.js';
import { fixtureIds, locateRun, openRun, type TranscriptRun } from '../transcripts/reader.js';
import { renderRun } from '../transcripts/replay-render.js';
import { verifyRun, type FixtureDrift } from './replay-verify.js';
import { sandboxesPerFixture } from '../pipeline/fixture-run.js';
import { createBackend } from './backend.js';
import { numberFromCli } from './compare.js';
import { RunSession } from './session.js';

const ReplayShape = {
  fixture: z.array(z.string().min(1)).default([]),
  speed: numberFromCli(0, ' (0 shows everything at once)').default(1),
  full: z.boolean().default(false),
  verify: z.boolean().default(false),
};
export const replayOptionsSchema = () => runOptionsSchema().extend(ReplayShape);
export const ReplayBaseSchema = RunBaseSchema.extend(ReplayShape);
export type ReplayOptions = z.infer<typeof ReplayBaseSchema>;

/** What `replay --verify` found: per fixture, drift or none. */
export interface VerifyResult {
  runId: string;
  mode: 'selfcheck' | 'run';
  recordedBackend: string;
  backend: string;
  drifted: number;
  interrupted: boolean;
  fixtures: FixtureDrift[];
}

class OutputClosed extends Error {}

/** Writes to stdout with backpressure; a reader that went away (`| head`) ends the replay quietly. */
function stdoutWriter(): (text: string) => Promise<void> {
  let closed = false;
  let waiting: (() => void) | null = null;
  process.stdout.on('error', (e: NodeJS.ErrnoException) => {
    if (e.code !== 'EPIPE') throw e;
    closed = true;
    waiting?.(); // a write waiting for 'drain' would otherwise wait for ever
  });
  return (text) =>
    new Promise((resolve, reject) => {
      if (closed) return reject(new OutputClosed());
      if (!text || process.stdout.write(text)) return resolve();
      waiting = () => reject(new OutputClosed());
      process.stdout.once('drain', () => {
        waiting = null;
        resolve();
      });
    });
}

function selectFixtures(run: TranscriptRun, wanted: readonly string[]): string[] {
  const all = fixtureIds(run);
  const unknown = wanted.filter((id) => !all.includes(id));
  if (unknown.length)
    throw new RedgreenError(
      'FIXTURE_NOT_FOUND',
      `not in run ${run.state.runId}: ${unknown.join(', ')}`,
      `its fixtures: ${all.join(', ') || '(none)'}`,
    );
  return wanted.length ? [...wanted] : all;
}

function printDrift(d: FixtureDrift): string {
  const head =
    d.status === 'same'
      ? `✔ ${d.fixtureId}  no drift (verdict ${d.verdict})`
      : d.status === 'skipped'
        ? `· ${d.fixtureId}  skipped: ${d.differences[0]}`
        : `✘ ${d.fixtureId}  drift: ${d.differences[0]}`;
  const more = d.status === 'drift' ? d.differences.slice(1, 10).map((x) => `    ${x}`) : [];
  if (d.differences.length > 10) more.push(`    … ${d.differences.length - 10} more differences`);
  return [head, ...more].join('\n');
}

/** Re-executes a recorded run in fresh sandboxes (the API's replay with verify, and the CLI's --verify). */
export async function verifyTranscript(
  ref: string,
  options: ReplayOptions,
  control: { signal?: AbortSignal; handleSignals: boolean; log?: (m: string) => void },
): Promise<VerifyResult> {
  const paths = resolvePaths(options);
  const run = await openRun(await locateRun(ref, paths.transcriptsDir));
  const ids = selectFixtures(run, options.fixture);
  const session = new RunSession('destroying sandboxes', {
    handleSignals: control.handleSignals,
    ...(control.signal ? { signal: control.signal } : {}),
    ...(control.log ? { warn: control.log } : {}),
  });
  const { outcome, backendName } = await session.run(async (s) => {
    const backend = await s.step(
      'backend',
      () => createBackend(options, paths),
      (b) => b?.close?.(),
    );
    // Recorded patches (no agent), perhaps on shared baselines: at most two sandboxes a fixture.
    const perFixture = sandboxesPerFixture({ mode: run.state.mode, agent: false, sharedBaselines: true });
    await s.step('open', () => backend.open?.(`verify-${run.state.runId}`, { sandboxes: ids.length * perFixture }));
    control.log?.(
      `verifying ${ids.length} fixture(s) of ${run.state.runId} (${run.state.mode}, recorded on ${run.state.backend}) on ${backend.name}`,
    );
    const outcome = await verifyRun({ run, fixtureIds: ids, roots: paths, backend, concurrency: options.concurrency, signal: s.signal });
    return { outcome, backendName: backend.name };
  });
  return {
    runId: run.state.runId,
    mode: run.state.mode,
    recordedBackend: run.state.backend,
    backend: backendName,
    drifted: outcome.fixtures.filter((d) => d.status === 'drift').length,
    interrupted: outcome.interrupted,
    fixtures: outcome.fixtures,
  };
}

async function verify(ref: string, options: ReplayOptions): Promise<number> {
  const r = await verifyTranscript(ref, options, { handleSignals: true, log: (m) => process.stderr.write(`${m}\n`) });
  const count = (s: FixtureDrift['status']) => r.fixtures.filter((d) => d.status === s).length;
  if (options.json) {
    const { interrupted: _, ...shown } = r;
    process.stdout.write(`${JSON.stringify(shown, null, 2)}\n`);
  } else {
    process.stdout.write(`${r.fixtures.map(printDrift).join('\n')}\n`);
    process.stdout.write(
      `${count('same')} without drift, ${count('drift')} drifted, ${count('skipped')} skipped — replayed on ${r.backend}, recorded on ${r.recordedBackend}\n`,
    );
  }
  if (r.interrupted) return 130;
  return r.drifted ? 1 : 0;
}

/** The story of a recorded run as text, at once (the API's replay without verify). */
export async function replayText(ref: string, options: ReplayOptions): Promise<string> {
  const run = await openRun(await locateRun(ref, resolvePaths(options).transcriptsDir));
  const ids = selectFixtures(run, options.fixture);
  let text = '';
  await renderRun(run, { speed: 0, fixtures: ids, style: { color: false, full: options.full }, write: async (t) => void (text += t) });
  return text;
}

/** `redgreen replay <transcripts/run-id>`: tell the run's story, or re-execute it with --verify. */
export async function replay(ref: string, options: ReplayOptions): Promise<number> {
  if (options.verify) return verify(ref, options);
  const run = await openRun(await locateRun(ref, resolvePaths(options).transcriptsDir));
  const ids = selectFixtures(run, options.fixture);
  const color = Boolean(process.stdout.isTTY) && !process.env.NO_COLOR;
  try {
    const summary = await renderRun(run, {
      speed: options.speed,
      fixtures: ids,
      style: { color, full: options.full },
      write: stdoutWriter(),
    });
    if (summary.problems)
      process.stderr.write(
        `warning: ${summary.problems} transcript line(s) could not be read; they are marked ⚠ with their line numbers\n`,
      );
  } catch (e) {
    if (!(e instanceof OutputClosed)) throw e;
  }
  return 0;
}
