/**
 * A warm pool: containers created, prepared and started ahead of time, so a sandbox is handed
 * out without waiting for the engine. Each is handed out once and never comes back — a sandbox
 * is destroyed after its fixture, never reused — and a replacement is started at once.
 */
export class WarmPool<T> {
  private readonly ready: T[] = [];
  private readonly inflight = new Set<Promise<void>>();
  private closed = false;
  private failures = 0;
  /** The last error a refill hit; refills stop after a few in a row (a broken engine or image). */
  lastError: unknown;

  constructor(
    private readonly size: number,
    private readonly make: () => Promise<T>,
    private readonly discard: (item: T) => Promise<void>,
  ) {}

  /** Starts filling the pool and resolves once it is full (or a refill failed). */
  async fill(): Promise<void> {
    this.refill();
    await Promise.all([...this.inflight]);
  }

  /** A prepared item, or undefined when none is ready yet (the caller creates one itself). */
  take(): T | undefined {
    const item = this.ready.shift();
    this.refill();
    return item;
  }

  get available(): number {
    return this.ready.length;
  }

  private refill(): void {
    while (!this.closed && this.failures < 3 && this.ready.length + this.inflight.size < this.size) {
      const p: Promise<void> = this.make().then(
        async (item) => {
          this.failures = 0;
          if (this.closed) await this.discard(item);
          else this.ready.push(item);
        },
        (e: unknown) => {
          this.failures++;
          this.lastError = e;
        },
      );
      this.inflight.add(p);
      void p.finally(() => this.inflight.delete(p));
    }
  }

  /** Stops refilling, waits for items being made, and discards every item not handed out. */
  async drain(): Promise<void> {
    this.closed = true;
    while (this.inflight.size) await Promise.all([...this.inflight]);
    await Promise.allSettled(this.ready.splice(0).map((item) => this.discard(item)));
  }
}
