import { readFixture, type ReadFixture } from '../fixtures/fingerprint.js';
import type { Fixture } from '../fixtures/load.js';
import type { SandboxBackend } from '../sandbox/core/types.js';
import type { SetupCache } from './setup-cache.js';
import { layerFor } from './workspace-layer-phase.js';

/**
 * The scheduler's look ahead: as each fixture starts, the backend is told which prepared layers
 * the fixtures after the running ones will start from, as many as it may start ahead
 * (`startsAhead`), so that a backend whose sandboxes start slowly over a layer (Docker with
 * `--pool`) starts theirs meanwhile. Those fixtures' trees are read for their fingerprints then,
 * and each reading handed to its fixture when it starts: nothing is read twice. Without a backend
 * that takes announcements (or without layers), each fixture is read when it starts, as before.
 */
export class Lookahead {
  private readonly reads = new Map<number, Promise<ReadFixture>>();
  /** The last fixture announced (or started without: the first `concurrency` start at once). */
  private announced: number;

  constructor(
    private readonly o: {
      fixtures: readonly Fixture[];
      backend: SandboxBackend;
      runId: string;
      setupCache: SetupCache | null;
      concurrency: number;
      signal: AbortSignal;
    },
  ) {
    this.announced = o.concurrency - 1;
  }

  /** The tree of the fixture at `index` (read ahead, or now); the fixtures up to `concurrency + startsAhead` later are announced. */
  read(index: number): Promise<ReadFixture> {
    const read = this.reads.get(index) ?? readFixture(this.o.fixtures[index]!);
    this.reads.delete(index);
    const last = index + this.o.concurrency + (this.o.backend.startsAhead ?? 0) - 1;
    while (this.announced < Math.min(last, this.o.fixtures.length - 1)) this.announce(++this.announced);
    return read;
  }

  private announce(index: number): void {
    const { backend, setupCache, signal } = this.o;
    const fixture = this.o.fixtures[index];
    const layers = setupCache?.layers;
    if (!fixture || !backend.expectLayer || !layers || signal.aborted) return;
    const read = readFixture(fixture);
    this.reads.set(index, read);
    // A tree that cannot be read is that fixture's verdict when it starts; nothing is announced.
    void read
      .then(async ({ sha256 }) => {
        const { key } = await layerFor(fixture, sha256, backend.name);
        if (signal.aborted) return;
        const image = fixture.manifest.image;
        backend.expectLayer!({ runId: this.o.runId, fixtureId: fixture.id, ...(image ? { image } : {}) }, { key, cacheDir: layers.dir });
      })
      .catch(() => undefined);
  }
}
