import type { FixtureEvent } from './events.js';
import type { Phase } from './result.js';

/** Times named phases, emits their start and end, and remembers the last one (for error messages). */
export class PhaseTimer {
  readonly timings: Record<string, number> = {};
  current: Phase | null = null;

  constructor(private readonly emit: (e: FixtureEvent) => void) {}

  async run<T>(name: Phase, fn: () => Promise<T>): Promise<T> {
    this.current = name;
    this.emit({ type: 'phase', phase: name, status: 'start' });
    const s = performance.now();
    try {
      return await fn();
    } finally {
      this.timings[name] = Math.round((performance.now() - s) * 10) / 10;
      this.emit({ type: 'phase', phase: name, status: 'end', durationMs: this.timings[name] });
    }
  }
}
