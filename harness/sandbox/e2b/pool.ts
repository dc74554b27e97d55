import type { Created } from './creator.js';

/**
 * A warm pool, as the Docker seed keeps one: `size` sandboxes created and initialised ahead of
 * demand, so a fixture's create phase is a hand-over instead of a round trip to the service. A
 * fixture that finds none ready waits for one already on its way rather than asking for one more;
 * when none is on its way it creates its own (take() resolves undefined). A warm sandbox idle for
 * longer than `maxIdleMs` is discarded, since its E2B timeout is not renewed while it waits.
 */
export class WarmPool {
  private readonly ready: Created[] = [];
  private readonly pending = new Set<Promise<void>>();
  private readonly waiters: ((c: Created | undefined) => void)[] = [];
  private draining = false;
  hits = 0;

  constructor(
    private readonly size: number,
    private readonly make: () => Promise<Created>,
    private readonly discard: (c: Created) => Promise<unknown>,
    private readonly maxIdleMs: number,
  ) {}

  /** Starts creations until `size` sandboxes are ready or on their way beyond those already promised. */
  fill(): void {
    while (!this.draining && this.ready.length + this.pending.size - this.waiters.length < this.size) {
      const p: Promise<void> = this.make()
        .then(
          (c) => this.arrive(c),
          () => this.arrive(undefined),
        )
        .then(() => undefined)
        .finally(() => this.pending.delete(p));
      this.pending.add(p);
    }
  }

  /** Returns the discard of a sandbox that arrived too late, so drain() can wait for it. */
  private arrive(c: Created | undefined): Promise<unknown> | undefined {
    const waiter = this.waiters.shift();
    if (waiter) return void waiter(c);
    if (!c) return undefined;
    if (this.draining) return this.discard(c);
    this.ready.push(c);
    return undefined;
  }

  async take(): Promise<Created | undefined> {
    let got: Created | undefined;
    while ((got = this.ready.shift()) && performance.now() - got.createdAt > this.maxIdleMs) void this.discard(got);
    if (!got && this.pending.size > this.waiters.length) got = await new Promise<Created | undefined>((resolve) => this.waiters.push(resolve));
    if (got) this.hits++;
    this.fill();
    return got;
  }

  /** Resolves when the creations started so far have finished (succeeded or not). */
  async settled(): Promise<void> {
    await Promise.allSettled([...this.pending]);
  }

  /** No more creations; every ready sandbox and every one still on its way is discarded. */
  async drain(): Promise<void> {
    this.draining = true;
    const ready = this.ready.splice(0);
    await Promise.allSettled([...ready.map((c) => this.discard(c)), ...this.pending]);
    for (const w of this.waiters.splice(0)) w(undefined);
  }
}
