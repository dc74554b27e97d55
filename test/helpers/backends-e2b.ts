import { oracleProvider } from '../../harness/agents/static.js';
import type { Discovery } from '../../harness/fixtures/load.js';
import type { RunObserver } from '../../harness/pipeline/events.js';
import type { PatchProvider } from '../../harness/pipeline/provider.js';
import type { FixtureResult } from '../../harness/pipeline/result.js';
import { runFixtures } from '../../harness/pipeline/scheduler.js';
import { E2BBackend, type E2BBackendOptions } from '../../harness/sandbox/e2b/backend.js';
import { startE2BDouble } from './e2b-server/server.js';

/**
 * The e2b backend for the conformance suite, driven through the official `e2b` SDK against the
 * local TEST DOUBLE of the E2B service (test/helpers/e2b-server — a fake of the cloud, not of
 * redgreen). The double runs commands as plain processes on this machine, so it isolates nothing.
 */
export const e2bDouble = await startE2BDouble();

export function e2bBackendOptions(extra: Partial<E2BBackendOptions> = {}): E2BBackendOptions {
  return { template: 'redgreen-test', apiKey: 'test-key', apiUrl: e2bDouble.apiUrl, sandboxUrl: e2bDouble.sandboxUrl, ...extra };
}

/** Fixtures through the real scheduler and pipeline on an e2b backend, with open() and close() around the run as a CLI run has. */
export async function runOnE2B(
  backend: E2BBackend,
  discovery: Discovery,
  opts: {
    runId: string;
    mode?: 'selfcheck' | 'run';
    provider?: PatchProvider;
    concurrency?: number;
    infraRetries?: number;
    signal?: AbortSignal;
    observer?: RunObserver;
  },
) {
  await backend.open(opts.runId);
  try {
    const outcome = await runFixtures({
      ...discovery,
      backend,
      runId: opts.runId,
      mode: opts.mode ?? 'selfcheck',
      provider: opts.provider ?? oracleProvider,
      concurrency: opts.concurrency ?? 4,
      repeat: 1,
      infraRetries: opts.infraRetries ?? 0,
      retryBaseMs: 10,
      signal: opts.signal ?? new AbortController().signal,
      observer: opts.observer ?? {},
    });
    return { ...outcome, byId: Object.fromEntries(outcome.results.map((r) => [r.fixtureId, r])) as Record<string, FixtureResult> };
  } finally {
    await backend.close();
  }
}
