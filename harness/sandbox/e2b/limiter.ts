/**
 * Bounds how fast sandboxes are created, whatever the concurrency: a token bucket (`ratePerSec`,
 * `burst`) and a cap on creation requests in flight. When the service pushes back (429/503),
 * `pause` holds every waiting creation, not just the one that was refused. Waiters are served in
 * order by one timer set for the moment the next token exists — nothing polls.
 */
export interface LimiterOptions {
  ratePerSec: number;
  burst: number;
  maxInFlight: number;
}

/** Not a sandbox's size (core/limits.ts): how fast the service is asked for sandboxes. */
export const DEFAULT_CREATION_RATE: LimiterOptions = { ratePerSec: 10, burst: 10, maxInFlight: 16 };

export interface LimiterStats {
  granted: number;
  /** Time callers spent waiting for a creation slot, in ms. */
  waitMsTotal: number;
  waitMsMax: number;
  pauses: number;
}

interface Waiter {
  since: number;
  resolve: (release: () => void) => void;
}

export class CreationLimiter {
  readonly stats: LimiterStats = { granted: 0, waitMsTotal: 0, waitMsMax: 0, pauses: 0 };
  private tokens: number;
  private last = performance.now();
  private inFlight = 0;
  private pausedUntil = 0;
  private readonly queue: Waiter[] = [];
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly o: LimiterOptions = DEFAULT_CREATION_RATE) {
    this.tokens = o.burst;
  }

  /** Resolves with a release function once this creation may start. */
  acquire(): Promise<() => void> {
    return new Promise((resolve) => {
      this.queue.push({ since: performance.now(), resolve });
      this.pump();
    });
  }

  /** The service refused: no creation starts for `ms` (a later, longer pause wins). */
  pause(ms: number): void {
    const until = performance.now() + ms;
    if (until <= this.pausedUntil) return;
    this.pausedUntil = until;
    this.stats.pauses++;
    this.tokens = 0;
  }

  private pump(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    while (this.queue.length && this.inFlight < this.o.maxInFlight) {
      const now = performance.now();
      this.tokens = Math.min(this.o.burst, this.tokens + ((now - this.last) * this.o.ratePerSec) / 1000);
      this.last = now;
      const blockedFor = Math.max(this.pausedUntil - now, this.tokens >= 1 ? 0 : ((1 - this.tokens) * 1000) / this.o.ratePerSec);
      if (blockedFor > 0) {
        this.timer = setTimeout(() => this.pump(), Math.ceil(blockedFor));
        return;
      }
      this.tokens -= 1;
      this.inFlight++;
      const w = this.queue.shift()!;
      const waited = now - w.since;
      this.stats.granted++;
      this.stats.waitMsTotal += waited;
      this.stats.waitMsMax = Math.max(this.stats.waitMsMax, waited);
      let released = false;
      w.resolve(() => {
        if (released) return;
        released = true;
        this.inFlight--;
        this.pump();
      });
    }
  }
}
