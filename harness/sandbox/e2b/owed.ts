import { argBytes, type Prelude, type PreludeOutcome, type Step } from './prelude.js';

/**
 * Deferred steps are at most this many bytes of arguments, so that with the helper (~3 KiB) and
 * the call's own arguments the command line stays under Linux's 128 KiB for one argument; a call
 * that would still exceed it sends its prelude ahead on its own (see HelperCalls.prepare).
 */
const DEFER_BYTES = 96 * 1024;

/** What one call took: its prelude, and whether its outcome is known yet. */
export interface Taken {
  prelude: Prelude;
  /** Steps deferred from earlier operations (the rest are the call's own, such as a cwd check). */
  deferred: number;
  settled: boolean;
}

/**
 * What a sandbox owes its next helper call: the helper's installation (a sandbox created on an
 * assumed root, see creator.ts) and the steps deferred while it was fresh. Fresh means no call was
 * made yet: the workspace then holds only what the harness put there, in order, so a deferred step
 * fails exactly when it would have failed at once — it only says so at the next call. Once a call is
 * made, every step runs at once again (a command may have made a symlink the next write must meet).
 */
export class Owed {
  private steps: Step[] = [];
  private bytes = 0;
  private called = false;
  /** The call carrying deferred steps, until its prelude's outcome is known: later calls wait for it. */
  private carrying: { done: Promise<void>; release: () => void } | null = null;

  constructor(private install: boolean) {}

  /** Queues a step for the next call; false when it must run now (not fresh, or too big to carry). */
  defer(step: Step): boolean {
    const size = argBytes(step.args);
    if (this.called || this.bytes + size > DEFER_BYTES) return false;
    this.steps.push(step);
    this.bytes += size;
    return true;
  }

  /** Bytes of arguments of the deferred steps. */
  get pendingBytes(): number {
    return this.bytes;
  }

  /** While a call carries deferred steps whose outcome is unknown: when that is known. Later calls wait for it. */
  get busy(): Promise<void> | undefined {
    return this.carrying?.done;
  }

  /**
   * The prelude of the next call, or null when it needs none. A kill takes only the installation:
   * it runs while the call carrying the deferred steps is still going, and must not wait for it.
   */
  take(own: readonly Step[], kill = false): Taken | null {
    this.called = true;
    const deferred = kill ? [] : this.steps.splice(0);
    if (!kill) this.bytes = 0;
    if (!this.install && !deferred.length && !own.length) return null;
    if (deferred.length) {
      let release!: () => void;
      const done = new Promise<void>((resolve) => (release = resolve));
      this.carrying = { done, release };
    }
    return { prelude: { install: this.install, steps: [...deferred, ...own] }, deferred: deferred.length, settled: false };
  }

  /**
   * A call's prelude ended: `outcome` is null when it is unknown (the call was stopped or its stream
   * lost before the outcome line). Returns true when deferred steps may or may not have run — the
   * workspace is then in a state nobody knows, and the sandbox must not be used further.
   */
  settle(t: Taken, outcome: PreludeOutcome | null): boolean {
    if (t.settled) return false;
    t.settled = true;
    // Past the installation: installed, whatever a later step did.
    if (outcome && (outcome.ok || (outcome.step !== 'home' && outcome.step !== 'install'))) this.install = false;
    if (t.deferred) {
      this.carrying?.release();
      this.carrying = null;
    }
    return outcome === null && t.deferred > 0;
  }
}
