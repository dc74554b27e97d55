import { describe, expect, it } from 'vitest';
import { WarmPool } from '../../harness/sandbox/core/warm-pool.js';

/** A pool over plain numbers: what is made, handed out and discarded is all visible. */
function pool(o: { size?: number; fail?: boolean; maxIdleMs?: number; maxFailures?: number } = {}) {
  let n = 0;
  const made: number[] = [];
  const discarded: number[] = [];
  const gates: (() => void)[] = [];
  let gated = false;
  const p = new WarmPool<number>({
    size: o.size ?? 2,
    make: async () => {
      if (gated) await new Promise<void>((r) => gates.push(r));
      if (o.fail) throw new Error(`make ${++n} failed`);
      made.push(++n);
      return n;
    },
    discard: async (i) => void discarded.push(i),
    ...(o.maxIdleMs !== undefined ? { maxIdleMs: o.maxIdleMs } : {}),
    ...(o.maxFailures !== undefined ? { maxFailures: o.maxFailures } : {}),
  });
  return { p, made, discarded, gate: (on: boolean) => (gated = on), open: () => gates.splice(0).forEach((g) => g()) };
}

describe('warm pool', () => {
  it('fills, hands each item out once, refills at once, and drains what is left', async () => {
    const { p, made, discarded } = pool();
    await p.fill();
    expect(p.available).toBe(2);
    expect([p.take(), p.take()]).toEqual([1, 2]);
    expect(p.hits).toBe(2);
    await p.settled();
    expect(made).toEqual([1, 2, 3, 4]);
    await p.drain();
    expect(discarded).toEqual([3, 4]);
    expect(p.take()).toBeUndefined();
  });

  it('take() does not wait; next() waits for an item already on its way, not promised to an earlier caller', async () => {
    const { p, gate, open } = pool({ size: 1 });
    gate(true);
    void p.fill();
    expect(p.take()).toBeUndefined();
    const waiting = p.next();
    // The one on its way is promised to the first waiter: the second is told to make its own.
    expect(await p.next()).toBeUndefined();
    open();
    expect(await waiting).toBe(1);
    expect(p.hits).toBe(1);
    await p.drain();
  });

  it('discards items idle for longer than maxIdleMs instead of handing them out', async () => {
    const { p, discarded } = pool({ size: 1, maxIdleMs: 0 });
    await p.fill();
    await new Promise((r) => setTimeout(r, 5));
    expect(p.take()).toBeUndefined();
    expect(discarded).toEqual([1]);
    await p.drain();
  });

  it('stops refilling after maxFailures failed creations in a row and keeps the last error', async () => {
    const { p } = pool({ size: 2, fail: true, maxFailures: 3 });
    await p.fill();
    expect(p.take()).toBeUndefined();
    await p.settled();
    expect(p.take()).toBeUndefined();
    await p.settled();
    expect(p.available).toBe(0);
    expect(String(p.lastError)).toMatch(/make [34] failed/);
    void p.fill();
    await p.settled();
    expect(String(p.lastError)).toMatch(/make [34] failed/);
    await p.drain();
  });
});

describe('warm pool whose items come back', () => {
  function returning(size: number) {
    let n = 0;
    const made: number[] = [];
    const discarded: number[] = [];
    const p = new WarmPool<number>({
      size,
      make: async () => (made.push(++n), n),
      discard: async (i) => void discarded.push(i),
      returns: true,
    });
    return { p, made, discarded };
  }

  it('refills only what is lost: items handed out count against its size until they come back', async () => {
    const { p, made, discarded } = returning(2);
    await p.fill();
    const [a, b] = [p.take(), p.take()];
    await p.settled();
    expect(made).toEqual([1, 2]);
    p.giveBack(a!, Promise.resolve(true));
    await p.settled();
    expect(p.take()).toBe(a);
    p.lost(b!);
    await p.settled();
    expect(made).toEqual([1, 2, 3]);
    p.giveBack(a!, Promise.resolve(false));
    await p.settled();
    expect(discarded).toEqual([a]);
    expect(made).toEqual([1, 2, 3, 4]);
    await p.drain();
  });

  it('with returns, told the takes still to come, it makes only what those can use beside what comes back', async () => {
    const { p, made, discarded } = returning(4);
    p.expect(3);
    await p.fill();
    expect(made).toEqual([1, 2, 3]);
    const [a, b] = [p.take(), p.take()];
    p.giveBack(a!, Promise.resolve(true));
    p.lost(b!);
    await p.settled();
    // One take left, two items ready (3, and a back): the one lost is not replaced.
    expect(p.take()).toBe(3);
    await p.settled();
    expect(made).toEqual([1, 2, 3]);
    await p.drain();
    expect(discarded).toEqual([a]);
  });

  it('next() waits for an item being made fit; items it did not make are kept too, unfit ones discarded', async () => {
    const { p, discarded } = returning(0);
    expect(await p.next()).toBeUndefined();
    let fit!: (ok: boolean) => void;
    p.giveBack(41, new Promise<boolean>((r) => (fit = r)));
    const waiting = p.next();
    fit(true);
    expect(await waiting).toBe(41);
    p.giveBack(41, Promise.resolve(false));
    p.giveBack(42, Promise.reject(new Error('reset failed')));
    await p.settled();
    expect(discarded).toEqual([41, 42]);
    expect(await p.next()).toBeUndefined();
    p.giveBack(43, Promise.resolve(true));
    await p.drain();
    expect(discarded).toEqual([41, 42, 43]);
  });
});

describe('warm pool start', () => {
  it('firstReady() resolves with the first item made, or once every creation failed', async () => {
    const { p, gate, open } = pool({ size: 2 });
    gate(true);
    void p.fill();
    let ready = false;
    const first = p.firstReady().then(() => (ready = true));
    await Promise.resolve();
    expect(ready).toBe(false);
    open();
    await first;
    expect(p.available).toBeGreaterThan(0);
    await p.drain();
    const failing = pool({ size: 2, fail: true, maxFailures: 2 });
    void failing.p.fill();
    await failing.p.firstReady();
    expect(failing.p.available).toBe(0);
    await failing.p.drain();
  });

  it('with maxMaking, makes at most that many at once, the next as one ends, until it is full; settled() waits for them all', async () => {
    let inFlight = 0;
    let most = 0;
    const gates: (() => void)[] = [];
    const made: number[] = [];
    const discarded: number[] = [];
    let n = 0;
    const p = new WarmPool<number>({
      size: 5,
      maxMaking: 2,
      make: async () => {
        most = Math.max(most, ++inFlight);
        await new Promise<void>((r) => gates.push(r));
        inFlight--;
        made.push(++n);
        return n;
      },
      discard: async (i) => void discarded.push(i),
    });
    void p.fill();
    expect(gates).toHaveLength(2);
    const first = p.firstReady();
    gates.shift()!();
    await first;
    // The first one is ready as soon as it is made; the third started when it ended.
    expect(p.available).toBe(1);
    expect(gates).toHaveLength(2);
    const full = p.settled();
    for (let i = 0; i < 4; i++) {
      while (!gates.length) await new Promise((r) => setImmediate(r));
      gates.shift()!();
    }
    await full;
    expect(made).toEqual([1, 2, 3, 4, 5]);
    expect(p.available).toBe(5);
    expect(most).toBe(2);
    // Draining while capped creations wait: none more starts, what arrives is discarded.
    expect([p.take(), p.take()]).toEqual([1, 2]);
    expect(gates).toHaveLength(2);
    const drained = p.drain();
    gates.splice(0).forEach((g) => g());
    await drained;
    expect(discarded.sort()).toEqual([3, 4, 5, 6, 7]);
    expect(gates).toHaveLength(0);
    expect(most).toBe(2);
  });

  it('told how many takes will come (expect), it makes no more than they can use: none left behind', async () => {
    const { p, made, discarded } = pool({ size: 8 });
    p.expect(3);
    await p.fill();
    expect(made).toEqual([1, 2, 3]);
    // Each take, served or not, uses one: no refill follows the last.
    expect([p.take(), p.take(), p.take()]).toEqual([1, 2, 3]);
    await p.settled();
    expect(made).toEqual([1, 2, 3]);
    await p.drain();
    expect(discarded).toEqual([]);

    // A caller waiting for an item on its way is one of the takes: nothing more is made for it.
    const q = pool({ size: 4 });
    q.p.expect(2);
    q.gate(true);
    void q.p.fill();
    const waiting = [q.p.next(), q.p.next()];
    q.gate(false);
    q.open();
    expect(await Promise.all(waiting)).toEqual([1, 2]);
    // A refill now (any later hand-out starts one) finds no take left to make for.
    await q.p.fill();
    expect(q.made).toEqual([1, 2]);
    await q.p.drain();
  });

  it('with maxMaking, a creation that fails starts no other: a broken engine is not retried in a loop', async () => {
    let tries = 0;
    const p = new WarmPool<number>({
      size: 4,
      maxMaking: 2,
      make: async () => {
        tries++;
        // Failing a turn later, as an engine does: a retry loop would still let the test time out.
        await new Promise((r) => setImmediate(r));
        throw new Error('no engine');
      },
      discard: async () => undefined,
    });
    await p.fill();
    await p.firstReady();
    await p.settled();
    expect(tries).toBe(2);
    expect(p.available).toBe(0);
    expect(String(p.lastError)).toMatch(/no engine/);
    await p.drain();
  });
});
