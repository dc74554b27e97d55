import { describeError, RedgreenError } from '../../errors.js';

/**
 * Stops creating sandboxes after `threshold` creation failures in a row: every fixture still
 * waiting then fails at once as an infrastructure error instead of queueing more requests at a
 * service that is down. After `cooldownMs` one trial creation is let through (half-open); its
 * success closes the circuit, its failure opens it again.
 */
export interface BreakerOptions {
  threshold: number;
  cooldownMs: number;
}

export const DEFAULT_BREAKER: BreakerOptions = { threshold: 8, cooldownMs: 30_000 };

export class CircuitBreaker {
  private failures = 0;
  private openedAt: number | null = null;
  private trialInFlight = false;
  private lastError: unknown = null;
  /** How many times the circuit opened. */
  opened = 0;

  constructor(private readonly o: BreakerOptions = DEFAULT_BREAKER) {}

  get state(): 'closed' | 'open' | 'half-open' {
    if (this.openedAt === null) return 'closed';
    return performance.now() - this.openedAt >= this.o.cooldownMs ? 'half-open' : 'open';
  }

  /** Throws (SANDBOX_FAILED, an infra error) unless a creation may be attempted now. */
  check(): void {
    const state = this.state;
    if (state === 'closed') return;
    if (state === 'half-open' && !this.trialInFlight) {
      this.trialInFlight = true;
      return;
    }
    const left = Math.max(0, this.o.cooldownMs - (performance.now() - this.openedAt!));
    throw new RedgreenError(
      'SANDBOX_FAILED',
      `e2b: not creating sandboxes: ${this.failures} creations failed in a row (last: ${describeError(this.lastError)}); next try in ${Math.ceil(left / 1000)}s`,
      'the sandbox service is failing; check its status, the API key and the template',
    );
  }

  success(): void {
    this.failures = 0;
    this.openedAt = null;
    this.trialInFlight = false;
  }

  failure(e: unknown): void {
    this.failures++;
    this.lastError = e;
    if (this.trialInFlight || this.failures >= this.o.threshold) {
      if (this.openedAt === null || this.trialInFlight) this.opened++;
      this.openedAt = performance.now();
    }
    this.trialInFlight = false;
  }
}
