import { readFixture, type ReadFixture } from '../fixtures/fingerprint.js';
import type { Fixture } from '../fixtures/load.js';
import type { SandboxBackend } from '../sandbox/core/types.js';
import type { SetupCache } from './setup-cache.js';
import { layerFor } from './workspace-layer-phase.js';

interface Ahead {
  read: Promise<ReadFixture>;
  /** Settles once the backend was told (or it was found there is nothing to tell); never rejects. */
  announced: Promise<void>;
  withdraw?: () => void;
}

/**
 * The scheduler's look ahead: as each fixture starts, the backend is told which prepared layers
 * the running fixtures and as many after them as it may start ahead (`startsAhead`) will start
 * from, in order, so that a backend whose sandboxes start slowly over a layer (Docker with
 * `--pool`) starts theirs meanwhile (a running fixture's at once, before it asks). Those fixtures'
 * trees are read for their fingerprints then, and each reading handed to its fixture when it
 * starts: nothing is read twice. Without a backend that takes announcements (or without layers),
 * each fixture is read when it starts, as before.
 */
export class Lookahead {
  private readonly ahead = new Map<number, Ahead>();
  /** The last fixture announced. */
  private announced = -1;
  /** Settles once the last fixture announced was told: the backend hears them in order. */
  private told: Promise<void> = Promise.resolve();

  constructor(
    private readonly o: {
      fixtures: readonly Fixture[];
      backend: SandboxBackend;
      runId: string;
      setupCache: SetupCache | null;
      concurrency: number;
      signal: AbortSignal;
    },
  ) {}

  /**
   * The tree of the fixture at `index` (read ahead, or now), once its own announcement is made
   * (so that its sandbox finds what was started for it); the next ones are announced.
   */
  async read(index: number): Promise<ReadFixture> {
    const last = Math.min(index + this.o.concurrency + (this.o.backend.startsAhead ?? 0) - 1, this.o.fixtures.length - 1);
    while (this.announced < last) this.announce(++this.announced);
    const own = this.ahead.get(index);
    if (!own) return readFixture(this.o.fixtures[index]!);
    await own.announced;
    return own.read;
  }

  /** The fixture at `index` ended: what was started for it and not taken is given up. */
  done(index: number): void {
    this.ahead.get(index)?.withdraw?.();
    this.ahead.delete(index);
  }

  private announce(index: number): void {
    const { backend, setupCache, signal } = this.o;
    const fixture = this.o.fixtures[index]!;
    const layers = setupCache?.layers;
    if (!backend.expectLayer || !layers || signal.aborted) return;
    const read = readFixture(fixture);
    const entry: Ahead = { read, announced: Promise.resolve() };
    // A tree that cannot be read is that fixture's verdict when it starts; nothing is announced.
    const key = read.then(async ({ sha256 }) => (await layerFor(fixture, sha256, backend.name)).key);
    key.catch(() => undefined);
    // Trees are read side by side, but the backend is told in the fixtures' order: it starts
    // ahead in the order told, so a later fixture read sooner must not take an earlier one's turn.
    entry.announced = this.told = this.told
      .then(async () => {
        const layer = await key;
        if (signal.aborted) return;
        const image = fixture.manifest.image;
        entry.withdraw = backend.expectLayer!(
          { runId: this.o.runId, fixtureId: fixture.id, ...(image ? { image } : {}) },
          { key: layer, cacheDir: layers.dir },
        );
      })
      .catch(() => undefined);
    this.ahead.set(index, entry);
  }
}
