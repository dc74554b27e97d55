import type { Fixture } from '../fixtures/load.js';
import type { SandboxBackend } from '../sandbox/core/types.js';
import type { ReadTree } from '../sandbox/core/tree.js';
import type { FixtureContext } from './context.js';
import type { FixtureEvent } from './events.js';
import type { PhaseTimer } from './phase-timer.js';
import type { TestPhase } from './result.js';
import type { SetupCache } from './setup-cache.js';
import { runTests } from './test-phase.js';
import { prepareWorkspace } from './workspace-phase.js';

/** A fixture's RED baseline, or why there is none: its setup timed out. */
export type Baseline = { red: TestPhase } | { setupTimeout: string };

/**
 * RED baselines shared by the runs of one command: when several models are graded over the same
 * fixtures, each fixture's setup and unpatched tests run once, in a sandbox of their own, and every
 * model's patch is then tested in a fresh sandbox without them — all the models graded alike.
 * Keyed by what decides a baseline: the fixture's content, the backend and the repeat count.
 */
export class SharedBaselines {
  private readonly baselines = new Map<string, Promise<{ baseline: Baseline; runId: string }>>();

  static key(fixtureSha256: string, backend: string, repeat: number): string {
    return `${fixtureSha256}\0${backend}\0${repeat}`;
  }

  /** An earlier run's baseline, or this run's, computed once (a failed one is computed again by the next run). */
  get(key: string, runId: string, compute: () => Promise<Baseline>): Promise<{ baseline: Baseline; runId: string }> {
    let shared = this.baselines.get(key);
    if (!shared) {
      shared = compute().then((baseline) => ({ baseline, runId }));
      this.baselines.set(key, shared);
      shared.catch(() => this.baselines.delete(key));
    }
    return shared;
  }

  /** A baseline a run recorded (replay --verify re-executes a run as it ran). */
  seed(key: string, baseline: Baseline, runId: string): void {
    this.baselines.set(key, Promise.resolve({ baseline, runId }));
  }
}

export interface BaselineRun {
  fixture: Fixture;
  fixtureSha256: string;
  /** The fixture's tree as its fingerprint read it (FixtureContext.tree). */
  tree?: ReadTree | null;
  backend: SandboxBackend;
  runId: string;
  repeat: number;
  signal: AbortSignal;
  emit: (event: FixtureEvent) => void;
  setupCache?: SetupCache | null;
}

/** The fixture's setup and RED baseline in a sandbox of their own, destroyed at the end. */
export async function baselineInOwnSandbox(o: BaselineRun, timer: PhaseTimer): Promise<Baseline> {
  const { fixture, emit } = o;
  const image = fixture.manifest.image ? { image: fixture.manifest.image } : {};
  const sb = await timer.run('create', () => o.backend.create({ runId: o.runId, fixtureId: `${fixture.id}-baseline`, ...image }));
  let release: (() => void) | null = null;
  try {
    emit({ type: 'sandbox', sandboxId: sb.id, backend: sb.backend, workdir: sb.workdir });
    const ctx: FixtureContext = { fixture, sandbox: sb, signal: o.signal, emit, setupCache: o.setupCache ?? null, tree: o.tree ?? null };
    const timedOut = await prepareWorkspace(ctx, timer, o.fixtureSha256, (r) => (release = r));
    if (timedOut) return { setupTimeout: timedOut.reason };
    return { red: await timer.run('red', () => runTests(ctx, 'red', o.repeat)) };
  } finally {
    await timer.run('destroy', () => sb.destroy());
    (release as (() => void) | null)?.();
  }
}
