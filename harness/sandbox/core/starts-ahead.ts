/**
 * Items made ahead for callers announced by key (a sandbox's container over a prepared layer,
 * started before its fixture begins): at most `limit` are being made or waiting untaken at a
 * time (one whose caller already waits for it no longer counts), the others wait their turn in the
 * order announced. A caller takes the item of the first
 * announcement of its key (waiting for it if it is on its way; none if its turn has not come:
 * the caller makes its own). An announcement withdrawn (its caller will not ask) is discarded
 * once made, as is everything left at `drain`.
 */
export interface StartsAheadOptions<T> {
  limit: number;
  discard: (item: T) => Promise<unknown>;
}

interface Announced<T> {
  key: string;
  make: () => Promise<T>;
  /** Set once its turn came: the item, or null when it could not be made. */
  made?: Promise<T | null>;
  /** Its caller took it: its place is free (the caller waits for it, nothing is ahead any more). */
  taken?: boolean;
}

export class StartsAhead<T> {
  /** Announced, not taken or withdrawn, in order. */
  private readonly waiting: Announced<T>[] = [];
  /** Items being made, or made and neither taken nor discarded yet. */
  private busy = 0;
  private readonly discards = new Set<Promise<unknown>>();
  private draining = false;
  /** Items handed out. */
  hits = 0;

  constructor(private readonly o: StartsAheadOptions<T>) {}

  /** A caller of `key` will come, for what `make` makes; returns the withdrawal, for when it will not (after it came, it does nothing). */
  announce(key: string, make: () => Promise<T>): () => void {
    if (this.draining) return () => undefined;
    const a: Announced<T> = { key, make };
    this.waiting.push(a);
    this.next();
    return () => {
      const i = this.waiting.indexOf(a);
      if (i < 0) return;
      this.waiting.splice(i, 1);
      if (a.made) this.discardWhenMade(a.made);
    };
  }

  /** The item of the first announcement of `key`: made, or waited for; undefined when there is none (or it could not be made). */
  async take(key: string): Promise<T | undefined> {
    const i = this.waiting.findIndex((a) => a.key === key);
    if (i < 0) return undefined;
    const [a] = this.waiting.splice(i, 1);
    // Its turn has not come: the caller makes its own, sooner than it would wait.
    if (!a!.made) return undefined;
    // Its place goes to the next at once, also while the caller still waits for it.
    a!.taken = true;
    this.free();
    const item = await a!.made;
    if (item === null) return undefined;
    this.hits++;
    return item;
  }

  /** Nothing more is made; everything made or on its way and not taken is discarded. */
  async drain(): Promise<void> {
    this.draining = true;
    for (const a of this.waiting.splice(0)) if (a.made) this.discardWhenMade(a.made);
    while (this.discards.size) await Promise.allSettled([...this.discards]);
  }

  /** Starts the making of announced items whose turn has come. */
  private next(): void {
    for (const a of this.waiting) {
      if (this.draining || this.busy >= this.o.limit) return;
      if (a.made) continue;
      this.busy++;
      // One that cannot be made frees its place at once (unless taken: it did then); its caller makes its own.
      a.made = a.make().catch(() => {
        if (!a.taken) this.free();
        return null;
      });
    }
  }

  private free(): void {
    this.busy--;
    this.next();
  }

  private discardWhenMade(made: Promise<T | null>): void {
    const p = made
      .then(async (item) => {
        if (item === null) return;
        await this.o.discard(item).catch(() => undefined);
        this.free();
      })
      .finally(() => this.discards.delete(p));
    this.discards.add(p);
  }
}
