/**
 * Retries with exponential backoff and jitter, for calls to a remote service that answers "later"
 * (429, 5xx, timeouts). The jitter spreads 64 workers that failed together over the wait window,
 * so they do not all come back at the same instant and fail together again.
 */
export interface RetryPolicy {
  /** Attempts in all, the first included. */
  attempts: number;
  baseMs: number;
  maxMs: number;
}

export const DEFAULT_RETRY: RetryPolicy = { attempts: 5, baseMs: 250, maxMs: 8000 };

/** "Equal jitter": half the exponential step for sure, the other half at random. */
export function backoffMs(policy: RetryPolicy, attempt: number, random: () => number = Math.random): number {
  const step = Math.min(policy.maxMs, policy.baseMs * 2 ** attempt);
  return Math.round(step / 2 + random() * (step / 2));
}

export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(t);
      reject(signal!.reason);
    };
    const t = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

export interface RetryHooks {
  isTransient: (e: unknown) => boolean;
  /** Called before each wait; may stretch it (e.g. a shared pause after a 429). */
  onRetry?: (e: unknown, attempt: number, waitMs: number) => void;
  signal?: AbortSignal;
}

/** Runs `fn` until it succeeds, fails for good, or the attempts run out; throws the last error. */
export async function withRetry<T>(fn: (attempt: number) => Promise<T>, policy: RetryPolicy, hooks: RetryHooks): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await fn(attempt);
    } catch (e) {
      if (attempt + 1 >= policy.attempts || !hooks.isTransient(e) || hooks.signal?.aborted) throw e;
      const wait = backoffMs(policy, attempt);
      hooks.onRetry?.(e, attempt, wait);
      await sleep(wait, hooks.signal);
    }
  }
}
