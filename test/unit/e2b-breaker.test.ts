import { afterEach, beforeEach, describe, expect, test, vi } from 'vitest';
import { isRedgreenError, RedgreenError } from '../../harness/errors.js';
import { CircuitBreaker } from '../../harness/sandbox/e2b/breaker.js';

// The breaker reads performance.now(): on the fake clock the cooldown is crossed exactly.
beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance', 'Date'] });
});
afterEach(() => {
  vi.useRealTimers();
});

const breaker = () => new CircuitBreaker({ threshold: 3, cooldownMs: 10_000 });
const fail = (b: CircuitBreaker, n: number, what = 'quota exceeded') => {
  for (let i = 1; i <= n; i++) b.failure(new Error(`${what} #${i}`));
};
/** The error check() throws, or null when a creation may go ahead. */
function refusal(b: CircuitBreaker): RedgreenError | null {
  try {
    b.check();
    return null;
  } catch (e) {
    if (e instanceof RedgreenError) return e;
    throw e;
  }
}

describe('CircuitBreaker: opening', () => {
  test('stays closed below the threshold of failures in a row', () => {
    const b = breaker();
    fail(b, 2);
    expect(b.state).toBe('closed');
    expect(refusal(b)).toBeNull();
    expect(b.opened).toBe(0);
  });

  test('a success resets the count: failures must be in a row', () => {
    const b = breaker();
    fail(b, 2);
    b.success();
    fail(b, 2);
    expect(b.state).toBe('closed');
  });

  test('opens at the threshold and refuses creations as an infrastructure error naming the failures', () => {
    const b = breaker();
    fail(b, 3, 'HTTP 500');
    expect(b.state).toBe('open');
    expect(b.opened).toBe(1);
    const e = refusal(b);
    expect(isRedgreenError(e, 'SANDBOX_FAILED')).toBe(true);
    expect(e!.exitCode).toBe(3);
    expect(e!.message).toBe('e2b: not creating sandboxes: 3 creations failed in a row (last: HTTP 500 #3); next try in 10s');
  });

  test('the refusal counts down to the next try', () => {
    const b = breaker();
    fail(b, 3);
    vi.advanceTimersByTime(6_500);
    expect(refusal(b)!.message).toMatch(/next try in 4s$/);
  });

  test('failures while open extend the cooldown but count as one opening', () => {
    const b = breaker();
    fail(b, 3);
    vi.advanceTimersByTime(9_000);
    fail(b, 2);
    expect(b.opened).toBe(1);
    vi.advanceTimersByTime(9_999);
    expect(b.state).toBe('open');
    expect(refusal(b)!.message).toContain('5 creations failed in a row');
  });
});

describe('CircuitBreaker: half-open recovery', () => {
  test('after the cooldown exactly one trial creation is let through', () => {
    const b = breaker();
    fail(b, 3);
    vi.advanceTimersByTime(9_999);
    expect(b.state).toBe('open');
    expect(refusal(b)).not.toBeNull();
    vi.advanceTimersByTime(1);
    expect(b.state).toBe('half-open');
    expect(refusal(b)).toBeNull();
    // While the trial is in flight every other creation is still refused.
    expect(refusal(b)!.message).toMatch(/next try in 0s$/);
  });

  test('a successful trial closes the circuit', () => {
    const b = breaker();
    fail(b, 3);
    vi.advanceTimersByTime(10_000);
    b.check();
    b.success();
    expect(b.state).toBe('closed');
    for (let i = 0; i < 5; i++) expect(refusal(b)).toBeNull();
    // Closed for real: it takes the full threshold again to open.
    fail(b, 2);
    expect(b.state).toBe('closed');
  });

  test('a failed trial opens the circuit again for a whole cooldown, at once', () => {
    const b = breaker();
    fail(b, 3);
    vi.advanceTimersByTime(10_000);
    b.check();
    b.failure(new Error('still down'));
    expect(b.state).toBe('open');
    expect(b.opened).toBe(2);
    expect(refusal(b)!.message).toContain('(last: still down)');
    vi.advanceTimersByTime(9_999);
    expect(b.state).toBe('open');
    vi.advanceTimersByTime(1);
    expect(refusal(b)).toBeNull();
  });
});
