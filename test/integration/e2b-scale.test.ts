import { describe, expect, test } from 'vitest';
import { E2BBackend } from '../../harness/sandbox/e2b/backend.js';
import { e2bBackendOptions, e2bDouble } from '../helpers/backends-e2b.js';

/** Many sandboxes at once without overwhelming the service: a bounded creation rate, a warm pool, keep-alive. */
describe('e2b backend at scale (test double)', () => {
  test('64 sandboxes in parallel: the creation rate stays bounded, every output is its own', { timeout: 120_000 }, async () => {
    const backend = new E2BBackend(e2bBackendOptions({ limits: { ratePerSec: 40, burst: 8, maxInFlight: 8 } }));
    const runId = `scale-${process.pid}`;
    const t0 = performance.now();
    try {
      const boxes = await Promise.all(Array.from({ length: 64 }, (_, i) => backend.create({ runId, fixtureId: `f${i}` })));
      const createdIn = performance.now() - t0;
      // 8 at once, then 40 per second: at least (64 - 8) / 40 s.
      expect(createdIn).toBeGreaterThan(((64 - 8) / 40) * 1000 * 0.9);
      expect(backend.limiter.stats).toMatchObject({ granted: 64 });
      expect(backend.limiter.stats.waitMsMax).toBeGreaterThan(1000);
      const outs = await Promise.all(boxes.map((b, i) => b.exec(`echo box-${i}`)));
      outs.forEach((r, i) => expect(r.stdout).toBe(`box-${i}\n`));
    } finally {
      await backend.close();
    }
    expect(e2bDouble.alive()).toEqual([]);
  });

  test('a warm pool hands over sandboxes created ahead of demand', async () => {
    const runId = `pool-${process.pid}`;
    const backend = new E2BBackend(e2bBackendOptions({ warm: 3 }));
    await backend.open(runId);
    await backend.warmed();
    const ready = e2bDouble.alive();
    expect(ready).toHaveLength(3);
    const sb = await backend.create({ runId, fixtureId: 'x' });
    expect(ready).toContain(sb.id);
    expect(backend.stats().poolHits).toBe(1);
    expect((await sb.exec('cat /dev/null; echo ok')).stdout).toBe('ok\n');
    await sb.destroy();
    await backend.close();
    expect(e2bDouble.alive()).toEqual([]);
  });

  test("a warm pool told the run's sandboxes (open's plan) makes none that no fixture takes", async () => {
    const runId = `plan-${process.pid}`;
    const backend = new E2BBackend(e2bBackendOptions({ warm: 8 }));
    try {
      await backend.open(runId, { sandboxes: 2 });
      await backend.warmed();
      expect(e2bDouble.alive()).toHaveLength(2);
      for (const id of ['a', 'b']) await (await backend.create({ runId, fixtureId: id })).destroy();
      await backend.warmed();
      expect(backend.stats()).toMatchObject({ created: 2, poolHits: 2 });
      expect(e2bDouble.alive()).toEqual([]);
    } finally {
      await backend.close();
    }
  });

  test('keep-alive renews the E2B timeout while a command outlives it', async () => {
    const backend = new E2BBackend(e2bBackendOptions({ lifetimeMs: 3000 }));
    const sb = await backend.create({ runId: `keepalive-${process.pid}`, fixtureId: 'k' });
    try {
      const r = await sb.exec('sleep 5; echo alive');
      expect(r.stdout).toBe('alive\n');
      expect(e2bDouble.alive()).toContain(sb.id);
    } finally {
      await sb.destroy();
    }
  });
});
