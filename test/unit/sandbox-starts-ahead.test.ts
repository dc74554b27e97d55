import { describe, expect, it } from 'vitest';
import { StartsAhead } from '../../harness/sandbox/core/starts-ahead.js';

/** Items are strings named by key and count; each making waits for its gate to open, so the test decides when it ends. */
function ahead(limit: number) {
  let n = 0;
  const started: string[] = [];
  const discarded: string[] = [];
  const gates = new Map<string, { open: () => void; fail: () => void }>();
  const s = new StartsAhead<string>({ limit, discard: async (item) => void discarded.push(item) });
  const announce = (key: string) =>
    s.announce(key, () => {
      const item = `${key}#${++n}`;
      started.push(item);
      return new Promise<string>((resolve, reject) =>
        gates.set(item, { open: () => resolve(item), fail: () => reject(new Error(`${item} failed`)) }),
      );
    });
  /** Drains with every making still on its way let through (drain waits for them). */
  const drain = () => {
    const drained = s.drain();
    for (const g of gates.values()) g.open();
    return drained;
  };
  return { s, announce, started, discarded, gate: (item: string) => gates.get(item)!, drain };
}

const tick = () => new Promise((r) => setImmediate(r));

describe('starts ahead', () => {
  it('makes at most `limit` at a time, in the order announced; a take frees a place for the next', async () => {
    const { s, drain, announce, started, gate } = ahead(2);
    announce('a');
    announce('b');
    announce('c');
    expect(started).toEqual(['a#1', 'b#2']);
    gate('b#2').open();
    await tick();
    // Made and not taken: it still holds its place.
    expect(started).toEqual(['a#1', 'b#2']);
    expect(await s.take('b')).toBe('b#2');
    expect(started).toEqual(['a#1', 'b#2', 'c#3']);
    // A take waits for the one on its way.
    const a = s.take('a');
    gate('a#1').open();
    expect(await a).toBe('a#1');
    expect(s.hits).toBe(2);
    await drain();
  });

  it('a caller whose turn has not come, or who was not announced, gets none and makes its own', async () => {
    const { s, drain, announce, started } = ahead(1);
    announce('a');
    const withdrawB = announce('b');
    expect(await s.take('b')).toBeUndefined();
    expect(await s.take('x')).toBeUndefined();
    expect(started).toEqual(['a#1']);
    // Taken already: the withdrawal does nothing.
    withdrawB();
    await drain();
  });

  it('a withdrawn announcement is discarded once made and frees its place; one that could not be made frees it at once', async () => {
    const { s, drain, announce, started, discarded, gate } = ahead(1);
    const withdrawA = announce('a');
    announce('b');
    announce('c');
    withdrawA();
    expect(started).toEqual(['a#1']);
    gate('a#1').open();
    await tick();
    await tick();
    expect(discarded).toEqual(['a#1']);
    expect(started).toEqual(['a#1', 'b#2']);
    gate('b#2').fail();
    await tick();
    expect(started).toEqual(['a#1', 'b#2', 'c#3']);
    expect(await s.take('b')).toBeUndefined();
    await drain();
  });

  it('a take frees its place at once, while its caller still waits; one taken that fails frees nothing more', async () => {
    const { s, drain, announce, started, gate } = ahead(1);
    announce('a');
    announce('b');
    announce('c');
    expect(started).toEqual(['a#1']);
    // The caller waits for it: nothing is ahead any more, so the next one starts now.
    const a = s.take('a');
    expect(started).toEqual(['a#1', 'b#2']);
    gate('a#1').fail();
    expect(await a).toBeUndefined();
    await tick();
    // Its failure did not free a second place: `c` still waits for `b`'s.
    expect(started).toEqual(['a#1', 'b#2']);
    gate('b#2').open();
    expect(await s.take('b')).toBe('b#2');
    expect(started).toEqual(['a#1', 'b#2', 'c#3']);
    await drain();
  });

  it('drain discards what was made or is on its way, and nothing more is made', async () => {
    const { s, announce, started, discarded, gate } = ahead(2);
    announce('a');
    announce('b');
    announce('c');
    gate('a#1').open();
    const drained = s.drain();
    gate('b#2').open();
    await drained;
    expect(discarded.sort()).toEqual(['a#1', 'b#2']);
    announce('d');
    expect(started).toEqual(['a#1', 'b#2']);
    expect(await s.take('c')).toBeUndefined();
  });
});
