import { afterEach, describe, expect, test } from 'vitest';
import { discoverFixtures } from '../../harness/fixtures/load.js';
import { diffTrees } from '../../harness/fixtures/scaffold.js';
import { E2BBackend, type E2BBackendOptions } from '../../harness/sandbox/e2b/backend.js';
import { gcSandboxes } from '../../harness/sandbox/e2b/gc.js';
import { e2bBackendOptions, e2bDouble, runOnE2B } from '../helpers/backends-e2b.js';
import { processesWith, uniqueSleep } from '../helpers/procs.js';
import { ADD_PY, ADD_TEST, PYTEST, useProjects, type InlineFixture } from '../helpers/project.js';

/**
 * Faults of the sandbox service, injected into the E2B test double: each must end as infra_error
 * (never a verdict about the fixture or the patch) with every sandbox of the run killed.
 */
const FAST: Partial<E2BBackendOptions> = {
  retry: { attempts: 3, baseMs: 5, maxMs: 20 },
  breaker: { threshold: 3, cooldownMs: 60_000 },
  requestTimeoutMs: 5000,
};
const FIXED = { 'calc.py': 'def add(a, b):\n    return a + b\n' };

// Some tests run twice: every project a test made is removed after it.
const made = useProjects();
let seq = 0;
afterEach(() => {
  e2bDouble.faults = {};
});

async function pytestFixtures(n: number): Promise<Record<string, InlineFixture>> {
  const oracle = await diffTrees({ 'calc.py': ADD_PY }, FIXED);
  return Object.fromEntries(
    Array.from({ length: n }, (_, i) => [`add${i}`, { manifest: PYTEST, files: { 'calc.py': ADD_PY, 'test_calc.py': ADD_TEST }, oracle }]),
  );
}

/** A fixture whose tests print a line and then run for a long time. */
function sleeper(token: string): InlineFixture {
  return {
    manifest: { runner: 'exit-code', test: { command: `echo started; sleep ${token}`, timeoutSec: 120 } },
    files: { 'a.txt': 'a\n' },
    oracle: '',
  };
}

async function run(
  fixtures: Record<string, InlineFixture>,
  options: Partial<E2BBackendOptions> = {},
  extra: { concurrency?: number; signal?: AbortSignal } = {},
) {
  const project = await made(fixtures);
  const runId = `faults-${process.pid}-${++seq}`;
  const backend = new E2BBackend(e2bBackendOptions({ ...FAST, ...options }));
  const outcome = await runOnE2B(backend, await discoverFixtures(project), {
    runId,
    concurrency: extra.concurrency ?? 1,
    ...(extra.signal ? { signal: extra.signal } : {}),
  });
  return { ...outcome, backend, runId };
}

/** Every sandbox the double ever created for this run was killed, by us (not by its timeout). */
function expectAllKilled(runId: string): void {
  const mine = e2bDouble.registry.history.filter((h) => h.metadata['redgreen.run'] === runId);
  expect(mine.filter((h) => h.killedBy === null || h.killedBy === 'timeout')).toEqual([]);
  expect(e2bDouble.alive().filter((id) => mine.some((h) => h.id === id))).toEqual([]);
}

describe('e2b backend: service faults end as infra_error, with every sandbox killed', () => {
  test('creation refused (429) every time: backoff, then the breaker stops asking', async () => {
    e2bDouble.faults = { refuseCreate: { status: 429 } };
    const before = e2bDouble.registry.requests['POST /v2/sandboxes'] ?? 0;
    const { results, backend, runId } = await run(await pytestFixtures(4));
    expect(results.map((r) => r.verdict)).toEqual(['infra_error', 'infra_error', 'infra_error', 'infra_error']);
    expect(results[0]!.reason).toMatch(/create.*Rate limit/);
    expect(results[3]!.reason).toContain('not creating sandboxes');
    // 3 attempts for the first fixture opened the circuit; the others never reached the service.
    expect((e2bDouble.registry.requests['POST /v2/sandboxes'] ?? 0) - before).toBe(3);
    expect(backend.stats()).toMatchObject({ breakerOpened: 1, retries: 2 });
    expect(backend.limiter.stats.pauses).toBeGreaterThan(0);
    expectAllKilled(runId);
  });

  test('creation refused twice (429, then 503): retried with backoff, and the fixture is graded', async () => {
    e2bDouble.faults = { refuseCreate: { status: 429, times: 1 } };
    const { byId, backend, runId } = await run(await pytestFixtures(1), { limits: { ratePerSec: 50, burst: 1, maxInFlight: 1 } });
    expect(byId.add0!.verdict).toBe('valid');
    expect(backend.stats().retries).toBe(1);
    e2bDouble.faults = { refuseCreate: { status: 503, times: 1 } };
    const second = await run(await pytestFixtures(1));
    expect(second.byId.add0!.verdict).toBe('valid');
    expectAllKilled(runId);
    expectAllKilled(second.runId);
  });

  test('a sandbox that dies mid-run', async () => {
    e2bDouble.faults = { dieOn: { match: 'python3 -m pytest', afterMs: 50 } };
    const { byId, runId } = await run(await pytestFixtures(1));
    expect(byId.add0!.verdict).toBe('infra_error');
    expect(byId.add0!.reason).toMatch(/^red: e2b: /);
    expect(e2bDouble.registry.history.find((h) => h.metadata['redgreen.run'] === runId)?.killedBy).toBe('fault: died mid-run');
    expectAllKilled(runId);
  });

  test('a stream cut in the middle: the command is killed inside the sandbox, not left running', async () => {
    const t = uniqueSleep();
    e2bDouble.faults = { cutStreamOn: { match: `sleep ${t}` } };
    const { byId, runId } = await run({ cut: sleeper(t) });
    expect(byId.cut!.verdict).toBe('infra_error');
    expect(byId.cut!.reason).toContain('lost the output stream');
    expect(processesWith(t)).toEqual([]);
    expectAllKilled(runId);
  });

  test('a slow sandbox (envd slower than the request timeout): creations fail and are killed', async () => {
    e2bDouble.faults = { latencyMs: { envd: 1500 } };
    const { byId, backend, runId } = await run(await pytestFixtures(1), {
      requestTimeoutMs: 500,
      retry: { attempts: 2, baseMs: 5, maxMs: 10 },
    });
    expect(byId.add0!.verdict).toBe('infra_error');
    expect(byId.add0!.reason).toMatch(/create: e2b: could not create a sandbox/);
    expect(backend.stats()).toMatchObject({ created: 0, failedAttempts: 2 });
    expectAllKilled(runId);
  });

  test('a slow control plane (creation slower than the request timeout): late sandboxes are found by their run label', async () => {
    e2bDouble.faults = { latencyMs: { create: 1200 } };
    const { byId, backend, runId } = await run(await pytestFixtures(1), {
      requestTimeoutMs: 400,
      retry: { attempts: 2, baseMs: 5, maxMs: 10 },
    });
    expect(byId.add0!.verdict).toBe('infra_error');
    // The service finishes creations we stopped waiting for: `redgreen gc --run <id>` (or their E2B
    // timeout) is what kills those — close() kills every one that existed when the run ended.
    await e2bDouble.apiSettled();
    const report = await gcSandboxes({ connection: backend.connection, runIds: [runId] });
    expect(report.killed.length).toBeGreaterThan(0);
    expectAllKilled(runId);
  });

  test('a kill that cannot be confirmed destroys the sandbox', async () => {
    const backend = new E2BBackend(e2bBackendOptions(FAST));
    const sb = await backend.create({ runId: `unconfirmed-${process.pid}`, fixtureId: 'x' });
    const t = uniqueSleep();
    e2bDouble.faults = { refuseStartOn: { match: `'kill'` } };
    const r = await sb.exec(`sleep ${t}`, { timeoutMs: 300 });
    expect(r).toMatchObject({ timedOut: true, exitCode: 137 });
    expect(e2bDouble.alive()).not.toContain(sb.id);
    expect(processesWith(t)).toEqual([]);
    await expect(sb.exec('true')).rejects.toMatchObject({ code: 'SANDBOX_FAILED' });
    await sb.destroy();
    await backend.close();
  });

  test('Ctrl-C: the aborted run kills every sandbox it had', async () => {
    const t = uniqueSleep();
    const ac = new AbortController();
    let started = 0;
    // Ctrl-C once the three test commands are running in their sandboxes.
    const onStart = (_id: string, cmd: string) => void (cmd.includes(`sleep ${t}`) && ++started === 3 && ac.abort());
    e2bDouble.registry.events.on('start', onStart);
    const project = await made({ s1: sleeper(t), s2: sleeper(t), s3: sleeper(t) });
    const runId = `abort-${process.pid}`;
    const backend = new E2BBackend(e2bBackendOptions(FAST));
    const { unfinished } = await runOnE2B(backend, await discoverFixtures(project), { runId, concurrency: 3, signal: ac.signal }).finally(
      () => e2bDouble.registry.events.off('start', onStart),
    );
    expect(started).toBe(3);
    expect(unfinished.sort()).toEqual(['s1', 's2', 's3']);
    expect(processesWith(t)).toEqual([]);
    expectAllKilled(runId);
  });

  test('memory stays flat when a command prints hundreds of megabytes', async () => {
    const backend = new E2BBackend(e2bBackendOptions());
    const sb = await backend.create({ runId: `loud-${process.pid}`, fixtureId: 'loud' });
    try {
      const before = process.memoryUsage().rss;
      const r = await sb.exec('head -c 200000000 /dev/zero | tr "\\0" a; echo END', { maxOutputBytes: 1 << 20 });
      expect(process.memoryUsage().rss - before).toBeLessThan(120 * 1024 * 1024);
      expect(r.stdoutInfo.bytes).toBe(200_000_004);
      expect(r.stdout.endsWith('END\n')).toBe(true);
    } finally {
      await sb.destroy();
    }
  });
});
