import pLimit from 'p-limit';
import { isRedgreenError } from '../errors.js';
import { fingerprintFixture } from '../fixtures/fingerprint.js';
import type { BrokenFixture, Fixture } from '../fixtures/load.js';
import type { SandboxBackend } from '../sandbox/types.js';
import type { RunObserver } from './events.js';
import { runFixture } from './fixture-run.js';
import type { PatchInput } from './patch-phase.js';
import type { FixtureResult } from './result.js';

export interface ScheduleOptions {
  fixtures: Fixture[];
  broken: BrokenFixture[];
  backend: SandboxBackend;
  runId: string;
  concurrency: number;
  repeat: number;
  patchFor: (fixture: Fixture) => Promise<PatchInput>;
  signal: AbortSignal;
  observer: RunObserver;
}

export interface ScheduleOutcome {
  results: FixtureResult[];
  /** Fixtures that did not reach a verdict because the run was interrupted. */
  unfinished: string[];
}

function brokenResult(b: BrokenFixture, backend: string): FixtureResult {
  return {
    fixtureId: b.id,
    verdict: 'invalid_fixture',
    reason: b.error.message,
    backend,
    sandboxId: null,
    startedAt: new Date().toISOString(),
    durationMs: 0,
    timings: {},
    red: null,
    green: null,
    patch: null,
    observed: null,
    error: { code: b.error.code, message: b.error.message },
  };
}

/** Runs fixtures in parallel (p-limit); each is independent and owns its sandbox. */
export async function runFixtures(o: ScheduleOptions): Promise<ScheduleOutcome> {
  const results: FixtureResult[] = [];
  const unfinished: string[] = [];
  for (const b of o.broken) {
    const r = brokenResult(b, o.backend.name);
    o.observer.onFixtureStart?.(b.id);
    o.observer.onEvent?.(b.id, { type: 'error', phase: null, code: b.error.code, message: b.error.message });
    o.observer.onEvent?.(b.id, { type: 'verdict', verdict: r.verdict, reason: r.reason });
    await o.observer.onFixtureEnd?.(b.id, r);
    results.push(r);
  }
  const limit = pLimit(Math.max(1, o.concurrency));
  await Promise.all(
    o.fixtures.map((fixture) =>
      limit(async () => {
        if (o.signal.aborted) {
          unfinished.push(fixture.id);
          return;
        }
        o.observer.onFixtureStart?.(fixture.id);
        try {
          const result = await runFixture({
            fixture,
            fixtureSha256: await fingerprintFixture(fixture),
            backend: o.backend,
            runId: o.runId,
            patch: await o.patchFor(fixture),
            repeat: o.repeat,
            signal: o.signal,
            emit: (event) => o.observer.onEvent?.(fixture.id, event),
          });
          results.push(result);
          await o.observer.onFixtureEnd?.(fixture.id, result);
        } catch (e) {
          if (!isRedgreenError(e, 'INTERRUPTED')) throw e;
          unfinished.push(fixture.id);
        }
      }),
    ),
  );
  const order = new Map([...o.broken.map((b) => b.id), ...o.fixtures.map((f) => f.id)].map((id, i) => [id, i]));
  results.sort((a, b) => (order.get(a.fixtureId) ?? 0) - (order.get(b.fixtureId) ?? 0));
  return { results, unfinished };
}
