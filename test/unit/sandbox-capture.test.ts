import { createHash, randomBytes } from 'node:crypto';
import { getEventListeners } from 'node:events';
import { describe, expect, test } from 'vitest';
import { onAbort, stopper } from '../../harness/sandbox/core/capture.js';
import { CappedOutput } from '../../harness/sandbox/core/output.js';
import { randomHex } from '../../harness/sandbox/core/random.js';

describe('onAbort', () => {
  test('one listener on the signal calls every function still waiting, each once, and none that was forgotten', () => {
    const c = new AbortController();
    const called: number[] = [];
    const forgets = Array.from({ length: 50 }, (_, i) => onAbort(c.signal, () => called.push(i)));
    expect(getEventListeners(c.signal, 'abort')).toHaveLength(1);
    for (let i = 0; i < 50; i += 2) forgets[i]!();
    c.abort();
    expect(called).toEqual(Array.from({ length: 25 }, (_, k) => 2 * k + 1));
    c.abort();
    expect(called).toHaveLength(25);
  });

  test('a signal already aborted calls the function soon, not at once', async () => {
    const c = new AbortController();
    c.abort();
    let called = 0;
    onAbort(c.signal, () => called++);
    expect(called).toBe(0);
    await Promise.resolve();
    expect(called).toBe(1);
  });
});

describe('stopper', () => {
  test('says abort or timeout, whichever came first, and stops once; disposed, it stops nothing', async () => {
    const c = new AbortController();
    let stops = 0;
    const aborted = stopper({ signal: c.signal, timeoutMs: 60_000 }, () => stops++);
    const disposed = stopper({ signal: c.signal }, () => stops++);
    disposed.dispose();
    c.abort();
    expect(aborted.state).toEqual({ timedOut: false, aborted: true });
    expect(disposed.state).toEqual({ timedOut: false, aborted: false });
    aborted.dispose();
    const timed = stopper({ signal: new AbortController().signal, timeoutMs: 1 }, () => stops++);
    await new Promise((r) => setTimeout(r, 20));
    expect(timed.state).toEqual({ timedOut: true, aborted: false });
    timed.dispose();
    expect(stops).toBe(2);
  });
});

describe('randomHex', () => {
  test('is n random bytes in hex, never the same twice, across refills of its pool', () => {
    const ids = Array.from({ length: 2000 }, () => randomHex(6));
    for (const id of ids) expect(id).toMatch(/^[0-9a-f]{12}$/);
    expect(new Set(ids).size).toBe(ids.length);
  });
});

describe('CappedOutput', () => {
  test('hashes and counts every byte, kept or not, wherever the chunks split them', () => {
    const cap = 64;
    for (const size of [0, 1, 31, 32, 33, 64, 65, 200, 1000]) {
      for (const chunk of [1, 7, 32, 33, 1000]) {
        const data = randomBytes(size);
        const out = new CappedOutput(cap);
        for (let at = 0; at < size; at += chunk) out.push(data.subarray(at, at + chunk));
        const got = out.finish();
        expect(got.sha256, `${size} bytes in chunks of ${chunk}`).toBe(createHash('sha256').update(data).digest('hex'));
        expect(got.bytes).toBe(size);
        expect(got.truncated).toBe(size > cap);
      }
    }
  });

  test('an empty stream (no chunk, or empty ones) is the empty text, valid UTF-8, and a capture of its own', () => {
    const none = new CappedOutput(64).finish();
    const empties = new CappedOutput(64);
    empties.push(Buffer.alloc(0));
    const other = empties.finish();
    for (const got of [none, other]) {
      expect(got).toEqual({ text: '', bytes: 0, sha256: createHash('sha256').digest('hex'), truncated: false, utf8: true });
    }
    none.text = 'changed';
    expect(other.text).toBe('');
    expect(new CappedOutput(64).finish().text).toBe('');
  });
});
