/**
 * A warm pool, as the Docker seed keeps one: `size` sandboxes created and prepared ahead of
 * demand, so a fixture's create phase is a hand-over instead of a round trip to the engine or
 * service. By default each one is handed out once and never comes back, and a replacement is
 * started at once. With `returns`, what is handed out comes back (`giveBack`, once made fit for
 * the next user, e.g. a container reset) or is `lost` (removed): it counts against `size`
 * meanwhile, so refills only replace what is lost, and an item being made fit counts as one on
 * its way. Items given back beyond `size` are kept too: reuse is always cheaper than making one.
 *
 * A fixture that finds none ready either creates its own at once (`take`) or waits for one
 * already on its way rather than asking for one more (`next`, for a service that limits how fast
 * sandboxes are created). A sandbox ready for longer than `maxIdleMs` is discarded instead of
 * handed out (a remote sandbox's lease is not renewed while it waits). After `maxFailures`
 * creations failed in a row, refills stop: the engine or image is broken, and `lastError` says how.
 * Told how many items a run will take at most (`expect`), it never holds more than that many
 * takes can use: a run of 3 fixtures with a pool of 8 makes 3, and the last fixtures leave no refills behind.
 */
export interface WarmPoolOptions<T> {
  size: number;
  make: () => Promise<T>;
  discard: (item: T) => Promise<unknown>;
  /** Default: ready items never go stale. */
  maxIdleMs?: number;
  /** Default: refills never stop. */
  maxFailures?: number;
  /** Handed-out items come back or are lost (see above). */
  returns?: boolean;
  /**
   * Creations at once (default: every one missing). Where a creation is CPU-bound on this machine
   * (a container start), more of them than its cores only delay the first ones: the first fixture
   * waits for its sandbox while the others are being made. The rest start as these end.
   */
  maxMaking?: number;
}

interface Ready<T> {
  item: T;
  since: number;
}

export class WarmPool<T> {
  private readonly ready: Ready<T>[] = [];
  private readonly pending = new Set<Promise<void>>();
  /** Callers of next() promised the next item to arrive, in order. */
  private readonly waiters: ((item: T | undefined) => void)[] = [];
  private draining = false;
  private failures = 0;
  /** Creations under way (pending also holds items on their way back). */
  private making = 0;
  /** With `returns`: handed out and neither back nor lost yet. */
  private readonly lent = new Set<T>();
  /** Takes still to come (expect()), a waiting one no longer among them: every take, served or not, uses one. */
  private takesLeft = Infinity;
  /** Items handed out. */
  hits = 0;
  /** The last error a creation hit. */
  lastError: unknown;

  constructor(private readonly o: WarmPoolOptions<T>) {}

  /** Starts creations until `size` items are ready or on their way (beyond those promised to waiters); resolves once those settle. */
  fill(): Promise<void> {
    while (
      !this.draining &&
      this.failures < (this.o.maxFailures ?? Infinity) &&
      this.making < (this.o.maxMaking ?? Infinity) &&
      this.ready.length + this.pending.size + this.lent.size - this.waiters.length < Math.min(this.o.size, this.takesLeft)
    ) {
      this.making++;
      let made = false;
      const p: Promise<void> = this.o
        .make()
        .then(
          (item) => {
            made = true;
            this.failures = 0;
            return this.arrive(item);
          },
          (e: unknown) => {
            this.failures++;
            this.lastError = e;
            return this.arrive(undefined);
          },
        )
        .then(() => undefined)
        .finally(() => {
          this.pending.delete(p);
          this.making--;
          // Capped: the next creation starts as this one is made (a failed one starts none, as uncapped).
          if (made && this.o.maxMaking !== undefined) void this.fill();
        });
      this.pending.add(p);
    }
    return this.settled();
  }

  /** Hands an arrival to the first waiter, else keeps it; returns the discard of one that came too late, so drain() waits for it. */
  private arrive(item: T | undefined): Promise<unknown> | undefined {
    const waiter = this.waiters.shift();
    if (waiter) return void waiter(item);
    if (item === undefined) return undefined;
    if (this.draining) return this.o.discard(item);
    this.ready.push({ item, since: performance.now() });
    return undefined;
  }

  /** A ready item, or undefined when none is (the caller creates one itself). */
  take(): T | undefined {
    this.takesLeft--;
    const got = this.freshest();
    this.handedOut(got);
    return got;
  }

  /** A ready item, else one already on its way and not promised to an earlier caller; undefined when there is none. */
  async next(): Promise<T | undefined> {
    this.takesLeft--;
    let got = this.freshest();
    if (got === undefined && this.pending.size > this.waiters.length)
      got = await new Promise<T | undefined>((resolve) => this.waiters.push(resolve));
    this.handedOut(got);
    return got;
  }

  /** The first ready item that has not gone stale; stale ones are discarded on the way. */
  private freshest(): T | undefined {
    let r: Ready<T> | undefined;
    while ((r = this.ready.shift()) && performance.now() - r.since > (this.o.maxIdleMs ?? Infinity)) void this.o.discard(r.item);
    return r?.item;
  }

  /**
   * At most `takes` more take()/next() calls will come (a run's sandboxes: SandboxBackend.open's
   * plan): from now on the pool makes only what they can use. Items already made stay.
   */
  expect(takes: number): void {
    this.takesLeft = Math.max(0, takes);
  }

  private handedOut(item: T | undefined): void {
    if (item !== undefined) {
      this.hits++;
      if (this.o.returns) this.lent.add(item);
    }
    void this.fill();
  }

  /**
   * With `returns`: an item comes back (one this pool made or not) once `fit` says it is fit for
   * the next user; until then it counts as one on its way (next() waits for it). Unfit, or given
   * back while draining, it is discarded and a refill replaces it.
   */
  giveBack(item: T, fit: Promise<boolean>): void {
    this.lent.delete(item);
    let back = false;
    const p: Promise<void> = fit
      .catch(() => false)
      .then((ok) => {
        back = ok && !this.draining;
        return back ? this.arrive(item) : this.o.discard(item);
      })
      .then(() => undefined)
      .finally(() => {
        this.pending.delete(p);
        // Counted as on its way until now: a replacement can start only once it is not.
        if (!back) void this.fill();
      });
    this.pending.add(p);
  }

  /** With `returns`: an item handed out will not come back (the caller removed it); a refill replaces it. */
  lost(item: T): void {
    if (this.lent.delete(item)) void this.fill();
  }

  get available(): number {
    return this.ready.length;
  }

  /** Resolves once an item is ready, or once every creation started so far has failed. */
  async firstReady(): Promise<void> {
    while (!this.ready.length && this.pending.size) await Promise.race([...this.pending]);
  }

  /** Resolves when the creations started so far have finished (succeeded or not), and, capped, those they started. */
  async settled(): Promise<void> {
    do await Promise.allSettled([...this.pending]);
    while (this.o.maxMaking !== undefined && this.making);
  }

  /** No more creations; every ready item and every one still on its way is discarded, and waiters get undefined. */
  async drain(): Promise<void> {
    this.draining = true;
    const ready = this.ready.splice(0);
    await Promise.allSettled([...ready.map((r) => this.o.discard(r.item)), ...this.pending]);
    for (const w of this.waiters.splice(0)) w(undefined);
  }
}
