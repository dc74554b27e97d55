import type { FixtureEvent } from './events.js';
import type { Phase } from './result.js';

/** Times named phases, emits their start and end, and remembers the last one (for error messages). */
export class PhaseTimer {
  readonly timings: Record<string, number> = {};
  /** Each phase's start (ms since `clock0`, the run's start) and duration: the report's timeline. */
  readonly spans: { phase: Phase; startMs: number; durationMs: number }[] = [];
  current: Phase | null = null;

  constructor(
    private readonly emit: (e: FixtureEvent) => void,
    private readonly clock0: number = performance.now(),
  ) {}

  async run<T>(name: Phase, fn: () => Promise<T>): Promise<T> {
    this.current = name;
    this.emit({ type: 'phase', phase: name, status: 'start' });
    const s = performance.now();
    try {
      return await fn();
    } finally {
      const durationMs = Math.round((performance.now() - s) * 10) / 10;
      // A phase may run twice (the patch: checked before the sandbox, synced after RED): timings add up.
      this.timings[name] = Math.round(((this.timings[name] ?? 0) + durationMs) * 10) / 10;
      this.spans.push({ phase: name, startMs: Math.round(s - this.clock0), durationMs });
      this.emit({ type: 'phase', phase: name, status: 'end', durationMs });
    }
  }
}
