import { afterEach, beforeEach, describe, expect, test, vi } from 'vitest';
import { isAuthFailure, isBackpressure, isGone, isTransient } from '../../harness/sandbox/e2b/errors.js';
import { connectStatus } from '../../harness/sandbox/e2b/wire/connect.js';
import { E2BRequestTimeout, E2BServiceError } from '../../harness/sandbox/e2b/wire/http.js';
import { backoffMs, sleep, withRetry, type RetryPolicy } from '../../harness/sandbox/e2b/retry.js';

// Waits are setTimeout on the fake clock; the jitter (Math.random) is pinned where a wait is checked.
beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance', 'Date'] });
});
afterEach(() => {
  vi.useRealTimers();
  vi.restoreAllMocks();
});

const policy: RetryPolicy = { attempts: 4, baseMs: 100, maxMs: 1000 };
const withStatus = (status: number) => new E2BServiceError(status, `HTTP ${status}`);

/** A call that fails with `errors` in turn, then returns 'ok'; `calls` lists the attempt numbers it saw. */
function flaky(...errors: unknown[]) {
  const calls: number[] = [];
  const fn = async (attempt: number) => {
    calls.push(attempt);
    if (calls.length <= errors.length) throw errors[calls.length - 1];
    return 'ok';
  };
  return { fn, calls };
}

describe('backoffMs: exponential steps with equal jitter', () => {
  test('half the step for sure, the other half at random', () => {
    expect(backoffMs(policy, 0, () => 0)).toBe(50);
    expect(backoffMs(policy, 0, () => 0.999999)).toBe(100);
    expect(backoffMs(policy, 2, () => 0)).toBe(200);
    expect(backoffMs(policy, 2, () => 0.5)).toBe(300);
  });

  test('the step doubles per attempt and stops at maxMs', () => {
    expect([0, 1, 2, 3, 4, 10].map((a) => backoffMs(policy, a, () => 0.999999))).toEqual([100, 200, 400, 800, 1000, 1000]);
  });
});

describe('withRetry', () => {
  test('retries a transient failure after each backoff, then returns the result', async () => {
    vi.spyOn(Math, 'random').mockReturnValue(0);
    const { fn, calls } = flaky(new Error('a'), new Error('b'));
    const waits: [number, number][] = [];
    const result = withRetry(fn, policy, { isTransient: () => true, onRetry: (_e, attempt, ms) => waits.push([attempt, ms]) });
    await vi.advanceTimersByTimeAsync(49);
    expect(calls).toEqual([0]);
    await vi.advanceTimersByTimeAsync(1);
    expect(calls).toEqual([0, 1]);
    await vi.advanceTimersByTimeAsync(99);
    expect(calls).toEqual([0, 1]);
    await vi.advanceTimersByTimeAsync(1);
    await expect(result).resolves.toBe('ok');
    expect(calls).toEqual([0, 1, 2]);
    expect(waits).toEqual([
      [0, 50],
      [1, 100],
    ]);
  });

  test('gives up after `attempts` calls in all and throws the last error', async () => {
    const last = new Error('third');
    const { fn, calls } = flaky(new Error('first'), new Error('second'), last, new Error('never thrown'));
    const onRetry = vi.fn();
    const result = withRetry(fn, { ...policy, attempts: 3 }, { isTransient: () => true, onRetry });
    const settled = expect(result).rejects.toBe(last);
    await vi.runAllTimersAsync();
    await settled;
    expect(calls).toEqual([0, 1, 2]);
    expect(onRetry).toHaveBeenCalledTimes(2);
  });

  test('a failure that is not transient is thrown at once, with no wait', async () => {
    const denied = withStatus(401);
    const { fn, calls } = flaky(denied);
    await expect(withRetry(fn, policy, { isTransient })).rejects.toBe(denied);
    expect(calls).toEqual([0]);
    expect(vi.getTimerCount()).toBe(0);
  });

  test('with the e2b classification, a 429 is retried and an invalid template is not', async () => {
    const bad = withStatus(400);
    const { fn, calls } = flaky(withStatus(429), bad);
    const result = withRetry(fn, policy, { isTransient });
    const settled = expect(result).rejects.toBe(bad);
    await vi.runAllTimersAsync();
    await settled;
    expect(calls).toEqual([0, 1]);
  });

  test('an abort during the wait ends it at once with the abort reason, and no further call', async () => {
    const ctl = new AbortController();
    const { fn, calls } = flaky(new Error('busy'));
    const result = withRetry(fn, policy, { isTransient: () => true, signal: ctl.signal });
    const settled = expect(result).rejects.toThrow('interrupted');
    await vi.advanceTimersByTimeAsync(10);
    ctl.abort(new Error('interrupted'));
    await settled;
    expect(calls).toEqual([0]);
    expect(vi.getTimerCount()).toBe(0);
  });

  test('once aborted, a failure is thrown as it is rather than waited on', async () => {
    const ctl = new AbortController();
    ctl.abort(new Error('interrupted'));
    const busy = new Error('busy');
    await expect(withRetry(flaky(busy).fn, policy, { isTransient: () => true, signal: ctl.signal })).rejects.toBe(busy);
  });
});

describe('sleep', () => {
  test('resolves after the given time, and an already-aborted signal rejects at once', async () => {
    let done = false;
    void sleep(300).then(() => (done = true));
    await vi.advanceTimersByTimeAsync(299);
    expect(done).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(done).toBe(true);
    const ctl = new AbortController();
    ctl.abort(new Error('stop'));
    await expect(sleep(300, ctl.signal)).rejects.toThrow('stop');
  });
});

describe('which e2b failures are retried', () => {
  test('"later" answers are transient: 429, 503, 5xx, 408, a request left unanswered', () => {
    for (const e of [
      withStatus(429),
      withStatus(503),
      withStatus(500),
      withStatus(502),
      withStatus(408),
      new E2BRequestTimeout('no answer'),
    ]) {
      expect(isTransient(e), e.message).toBe(true);
    }
  });

  test('answers that another try cannot change are not: auth, bad argument, not found, other 4xx', () => {
    for (const e of [withStatus(401), withStatus(403), withStatus(400), withStatus(404), withStatus(409)]) {
      expect(isTransient(e), e.message).toBe(false);
    }
  });

  test('a Connect error reads as its HTTP status: unavailable is transient, invalid_argument is not', () => {
    expect(isTransient(withStatus(connectStatus('unavailable')))).toBe(true);
    expect(isTransient(withStatus(connectStatus('resource_exhausted')))).toBe(true);
    expect(isTransient(withStatus(connectStatus('invalid_argument')))).toBe(false);
    expect(isAuthFailure(withStatus(connectStatus('unauthenticated')))).toBe(true);
    expect(connectStatus('a code nobody knows')).toBe(500);
  });

  test('a dropped connection is transient, found through the cause chain; an ordinary bug is not', () => {
    expect(isTransient(Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }))).toBe(true);
    expect(isTransient(new Error('socket', { cause: Object.assign(new Error('reset'), { code: 'ECONNRESET' }) }))).toBe(true);
    expect(isTransient(Object.assign(new Error('x'), { code: 'ECONNREFUSED' }))).toBe(true);
    expect(isTransient(new TypeError('cannot read properties of undefined'))).toBe(false);
    expect(isTransient(Object.assign(new Error('x'), { code: 'ENOENT' }))).toBe(false);
  });

  test('only 429 and 503 are backpressure (every creation backs off); only 404 says the sandbox is gone', () => {
    expect([withStatus(429), withStatus(503)].map(isBackpressure)).toEqual([true, true]);
    expect(
      [withStatus(500), new E2BRequestTimeout('t'), Object.assign(new Error('x'), { code: 'ECONNRESET' })].map(isBackpressure),
    ).toEqual([false, false, false]);
    expect([withStatus(404), withStatus(502), withStatus(401)].map(isGone)).toEqual([true, false, false]);
  });
});
