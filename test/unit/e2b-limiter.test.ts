import { afterEach, beforeEach, describe, expect, test, vi } from 'vitest';
import { CreationLimiter, type LimiterOptions } from '../../harness/sandbox/e2b/limiter.js';

// The limiter reads performance.now() and waits with setTimeout: both are on the fake clock, so
// every moment below is exact and nothing sleeps.
beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance', 'Date'] });
});
afterEach(() => {
  vi.useRealTimers();
});

/** `n` creations asking at once; `granted` lists who got a slot, in order, with their release. */
function ask(limiter: CreationLimiter, n: number) {
  const granted: number[] = [];
  const releases = new Map<number, () => void>();
  for (let i = 0; i < n; i++) {
    void limiter.acquire().then((release) => {
      granted.push(i);
      releases.set(i, release);
    });
  }
  return { granted, releases };
}

/** Moves the fake clock and lets the granted promises settle. */
const advance = (ms: number) => vi.advanceTimersByTimeAsync(ms);
const limiter = (o: Partial<LimiterOptions>) => new CreationLimiter({ ratePerSec: 10, burst: 10, maxInFlight: 100, ...o });

describe('CreationLimiter: token bucket', () => {
  test('a burst goes at once, then one creation per 1/rate seconds', async () => {
    const l = limiter({ ratePerSec: 2, burst: 3 });
    const { granted } = ask(l, 5);
    await advance(0);
    expect(granted).toEqual([0, 1, 2]);
    await advance(499);
    expect(granted).toHaveLength(3);
    await advance(1);
    expect(granted).toEqual([0, 1, 2, 3]);
    await advance(499);
    expect(granted).toHaveLength(4);
    await advance(1);
    expect(granted).toEqual([0, 1, 2, 3, 4]);
  });

  test('waiting time is counted per creation (on the fake clock)', async () => {
    const l = limiter({ ratePerSec: 2, burst: 3 });
    ask(l, 5);
    await advance(1000);
    expect(l.stats).toEqual({ granted: 5, waitMsTotal: 500 + 1000, waitMsMax: 1000, pauses: 0 });
  });

  test('an idle limiter refills up to the burst, never beyond it', async () => {
    const l = limiter({ ratePerSec: 10, burst: 2 });
    ask(l, 2);
    await advance(60_000);
    const { granted } = ask(l, 5);
    await advance(0);
    expect(granted).toEqual([0, 1]);
    await advance(99);
    expect(granted).toHaveLength(2);
    await advance(1);
    expect(granted).toEqual([0, 1, 2]);
  });
});

describe('CreationLimiter: creations in flight', () => {
  test('no more than maxInFlight at once; a release lets the next waiter in', async () => {
    const l = limiter({ ratePerSec: 1000, burst: 1000, maxInFlight: 2 });
    const { granted, releases } = ask(l, 4);
    await advance(0);
    expect(granted).toEqual([0, 1]);
    // Plenty of tokens and time: only a release can let a third creation start, and nothing polls.
    await advance(10_000);
    expect(granted).toEqual([0, 1]);
    expect(vi.getTimerCount()).toBe(0);
    releases.get(1)!();
    await advance(0);
    expect(granted).toEqual([0, 1, 2]);
  });

  test('releasing twice frees one slot, not two', async () => {
    const l = limiter({ ratePerSec: 1000, burst: 1000, maxInFlight: 1 });
    const { granted, releases } = ask(l, 3);
    await advance(0);
    const first = releases.get(0)!;
    first();
    first();
    await advance(0);
    expect(granted).toEqual([0, 1]);
  });

  test('waiters are served in the order they asked', async () => {
    const l = limiter({ ratePerSec: 10, burst: 1, maxInFlight: 1 });
    const { granted, releases } = ask(l, 3);
    await advance(0);
    releases.get(0)!();
    await advance(100);
    releases.get(1)!();
    await advance(100);
    expect(granted).toEqual([0, 1, 2]);
  });
});

describe('CreationLimiter: pause after the service pushes back', () => {
  test('a pause holds every waiting creation until it ends, tokens or not', async () => {
    const l = limiter({});
    l.pause(1000);
    const { granted } = ask(l, 3);
    await advance(999);
    expect(granted).toEqual([]);
    await advance(1);
    expect(granted).toEqual([0, 1, 2]);
    expect(l.stats.pauses).toBe(1);
  });

  test('a pause empties the bucket: afterwards creations resume at the rate, not in a burst', async () => {
    const l = limiter({ ratePerSec: 1, burst: 5 });
    l.pause(100);
    const { granted } = ask(l, 3);
    await advance(999);
    expect(granted).toEqual([]);
    await advance(1);
    expect(granted).toEqual([0]);
    await advance(1000);
    expect(granted).toEqual([0, 1]);
  });

  test('a shorter pause during a longer one changes nothing; a longer one extends it', async () => {
    const l = limiter({});
    l.pause(1000);
    const { granted } = ask(l, 1);
    await advance(200);
    l.pause(300);
    expect(l.stats.pauses).toBe(1);
    await advance(800);
    expect(granted).toEqual([0]);

    l.pause(1000);
    const later = ask(l, 1);
    await advance(500);
    l.pause(2000);
    expect(l.stats.pauses).toBe(3);
    await advance(1999);
    expect(later.granted).toEqual([]);
    await advance(1);
    expect(later.granted).toEqual([0]);
  });
});
