import pLimit from 'p-limit';
import { describeError, isRedgreenError, RedgreenError } from '../errors.js';
import type { BrokenFixture, Fixture } from '../fixtures/load.js';
import type { SandboxBackend } from '../sandbox/core/types.js';
import type { RunObserver } from './events.js';
import { runFixture } from './fixture-run.js';
import { Lookahead } from './lookahead.js';
import type { PatchProvider } from './provider.js';
import type { SetupCache } from './setup-cache.js';
import type { SharedBaselines } from './baseline-phase.js';
import type { FixtureResult } from './result.js';

export interface ScheduleOptions {
  mode: 'selfcheck' | 'run';
  fixtures: Fixture[];
  broken: BrokenFixture[];
  backend: SandboxBackend;
  runId: string;
  concurrency: number;
  repeat: number;
  provider: PatchProvider;
  /** Run mode: the RED baseline before grading (default on). */
  baseline?: boolean;
  /** Run mode: `--strict` (see FixtureRunOptions). */
  strict?: boolean;
  /** Infrastructure errors are retried this many times, with exponential backoff. */
  infraRetries?: number;
  retryBaseMs?: number;
  signal: AbortSignal;
  observer: RunObserver;
  setupCache?: SetupCache | null;
  /** Several models graded at once: RED baselines made once for all of them. */
  baselines?: SharedBaselines | null;
}

export interface ScheduleOutcome {
  results: FixtureResult[];
  /** Fixtures that did not reach a verdict because the run was interrupted. */
  unfinished: string[];
}

function brokenResult(id: string, error: RedgreenError, backend: string): FixtureResult {
  return {
    fixtureId: id,
    verdict: 'invalid_fixture',
    reason: error.message,
    backend,
    sandboxId: null,
    startedAt: new Date().toISOString(),
    durationMs: 0,
    timings: {},
    spans: [],
    red: null,
    green: null,
    patch: null,
    observed: null,
    error: { code: error.code, message: error.message },
  };
}

/** A fixture that cannot even be read (its manifest, its tree) ends as invalid_fixture, never the run. */
async function finishBroken(o: ScheduleOptions, id: string, error: RedgreenError): Promise<FixtureResult> {
  const r = brokenResult(id, error, o.backend.name);
  o.observer.onEvent?.(id, { type: 'error', phase: null, code: error.code, message: error.message });
  o.observer.onEvent?.(id, { type: 'verdict', verdict: r.verdict, reason: r.reason });
  await o.observer.onFixtureEnd?.(id, r);
  return r;
}

/** What reading a fixture's tree failed with, as the fixture's own problem. */
function fixtureError(e: unknown): RedgreenError {
  if (isRedgreenError(e)) return e;
  return new RedgreenError('MANIFEST_INVALID', `cannot read the fixture: ${describeError(e)}`);
}

/**
 * An infrastructure failure says nothing about the fixture or the patch, so it is retried a
 * bounded number of times with exponential backoff before it is reported as infra_error.
 */
async function withRetries(o: ScheduleOptions, attempt: () => Promise<FixtureResult>): Promise<FixtureResult> {
  const retries = o.infraRetries ?? 2;
  const t0 = performance.now();
  // The whole time spent, retries and waits included, is what the fixture took.
  const done = (r: FixtureResult, i: number) => ({ ...r, durationMs: Math.round(performance.now() - t0), attempts: i + 1 });
  let previous: FixtureResult | null = null;
  for (let i = 0; ; i++) {
    const r = await attempt();
    const code = r.error?.code;
    if (code === 'SETUP_FAILED' && previous?.error?.code === 'SETUP_FAILED' && previous.reason === r.reason) {
      return done(
        { ...r, verdict: 'invalid_fixture', reason: `${r.reason} (the same again on a second try: the fixture's setup, not the machine)` },
        i,
      );
    }
    // A missing tool stays missing: retrying only delays the verdict.
    const transient = r.verdict === 'infra_error' && code !== 'TOOL_MISSING';
    if (!transient || i >= retries || o.signal.aborted) return done(r, i);
    previous = r;
    await sleepUnlessAborted((o.retryBaseMs ?? 1000) * 2 ** i, o.signal);
  }
}

function sleepUnlessAborted(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const t = setTimeout(done, ms);
    function done() {
      clearTimeout(t);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}

/** Runs fixtures in parallel (p-limit); each is independent and owns its sandbox. */
export async function runFixtures(o: ScheduleOptions): Promise<ScheduleOutcome> {
  const results: FixtureResult[] = [];
  const unfinished: string[] = [];
  for (const b of o.broken) {
    o.observer.onFixtureStart?.(b.id);
    results.push(await finishBroken(o, b.id, b.error));
  }
  const limit = pLimit(Math.max(1, o.concurrency));
  const clock0 = performance.now();
  // Worker slots for the timeline: a fixture takes the lowest free one.
  const free = Array.from({ length: Math.max(1, o.concurrency) }, (_, i) => i);
  const ahead = new Lookahead({ ...o, setupCache: o.setupCache ?? null, concurrency: Math.max(1, o.concurrency) });
  await Promise.all(
    o.fixtures.map((fixture, index) =>
      limit(async () => {
        if (o.signal.aborted) {
          unfinished.push(fixture.id);
          return;
        }
        o.observer.onFixtureStart?.(fixture.id);
        free.sort((a, b) => a - b);
        const slot = free.shift() ?? 0;
        try {
          // Inside the fixture's own handling: a tree that cannot be read is this fixture's verdict.
          const read = await ahead.read(index).catch((e: unknown) => fixtureError(e));
          if (read instanceof RedgreenError) {
            results.push(await finishBroken(o, fixture.id, read));
            return;
          }
          const result = await withRetries(o, () =>
            runFixture({
              mode: o.mode,
              fixture,
              fixtureSha256: read.sha256,
              tree: read.tree,
              oracle: read.oracle,
              backend: o.backend,
              runId: o.runId,
              provider: o.provider,
              repeat: o.repeat,
              baseline: o.baseline ?? true,
              strict: o.strict ?? false,
              signal: o.signal,
              emit: (event) => o.observer.onEvent?.(fixture.id, event),
              clock0,
              slot,
              setupCache: o.setupCache ?? null,
              baselines: o.baselines ?? null,
            }),
          );
          results.push(result);
          await o.observer.onFixtureEnd?.(fixture.id, result);
        } catch (e) {
          if (!isRedgreenError(e, 'INTERRUPTED')) throw e;
          unfinished.push(fixture.id);
        } finally {
          ahead.done(index);
          free.push(slot);
        }
      }),
    ),
  );
  const order = new Map([...o.broken.map((b) => b.id), ...o.fixtures.map((f) => f.id)].map((id, i) => [id, i]));
  results.sort((a, b) => (order.get(a.fixtureId) ?? 0) - (order.get(b.fixtureId) ?? 0));
  return { results, unfinished };
}
