import { randomUUID } from 'node:crypto';
import { RedgreenError } from '../../errors.js';
import { sandboxFailure } from './errors.js';
import { Owed, type Taken } from './owed.js';
import { argBytes, preludeCommand, preludeError, PreludeReader, type Step } from './prelude.js';
import { helperCommand, HELPER_UNSAFE_PATH } from './script.js';
import type { Envd, RunResult as HelperResult } from './wire/envd.js';

/** A helper step (unpack, read, kill…) taking longer than this means the sandbox is in trouble. */
const HELPER_TIMEOUT_MS = 60_000;
/** Bytes of arguments a call's prelude may add to its own before it is sent ahead on its own (see owed.ts). */
const CALL_BYTES = 112 * 1024;

/** One helper call's command line; `finish` settles its prelude, throwing what a failed one stands for. */
export interface Call {
  line: string;
  /** Takes the prelude's outcome off the call's stdout (null: the call carries none). */
  reader: PreludeReader | null;
  finish(): void;
}

/** What a sandbox's helper calls need from it. */
export interface CallsContext {
  envd: Envd;
  root: string;
  user: string | undefined;
  requestTimeoutMs: number;
  /** Throws unless the sandbox may still be used. */
  assertUsable(): void;
  /** The sandbox must not be used any more, for this reason. */
  lose(why: unknown): void;
  /** Its home is not where its root was assumed to be (creator.ts). */
  onRootMismatch(): void;
}

/**
 * The helper calls of one sandbox (script.ts), each one request, with what the sandbox owes them
 * riding in front (owed.ts, prelude.ts): the helper's installation, steps deferred while it was
 * fresh, a call's own checks.
 */
export class HelperCalls {
  private readonly owed: Owed;

  /** `installed`: the creator put the helper in place; else the first call installs it. */
  constructor(
    private readonly c: CallsContext,
    installed: boolean,
  ) {
    this.owed = new Owed(!installed);
  }

  /** A call's command line. A kill never waits: it stops the very call that may carry the deferred steps. */
  async prepare(args: readonly string[], own: readonly Step[] = [], kill = false): Promise<Call> {
    if (!kill) {
      for (let busy = this.owed.busy; busy; busy = this.owed.busy) await busy;
      this.c.assertUsable();
      // Deferred steps and this call's arguments would not fit in one command line: send them ahead.
      if (this.owed.pendingBytes && this.owed.pendingBytes + argBytes([...args, ...own.flatMap((s) => s.args)]) > CALL_BYTES) {
        await this.run(['check']);
        return this.prepare(args, own);
      }
    }
    // No await between the last look at `busy` and here: a call made meanwhile sees this one carrying.
    const taken = this.owed.take(own, kill);
    if (!taken) return { line: helperCommand(this.c.root, args), reader: null, finish: () => undefined };
    const nonce = randomUUID();
    const reader = new PreludeReader(nonce, () => void this.owed.settle(taken, reader.outcome));
    return { line: preludeCommand(this.c.root, taken.prelude, args, nonce), reader, finish: () => this.finish(taken, reader) };
  }

  private finish(taken: Taken, reader: PreludeReader): void {
    const outcome = reader.outcome;
    if (this.owed.settle(taken, outcome))
      this.c.lose(new Error('a command carrying deferred uploads was stopped before they were done: the workspace is in an unknown state'));
    if (!outcome || outcome.ok) return;
    const error = preludeError(outcome, taken.prelude.steps, this.c.envd.sandboxId);
    if (outcome.step === 'home') {
      this.c.lose(error);
      this.c.onRootMismatch();
    }
    throw error;
  }

  /** Runs one helper call to its end; a non-zero exit is a result. */
  async run(args: readonly string[], own: readonly Step[] = [], kill = false): Promise<HelperResult> {
    const call = await this.prepare(args, own, kill);
    let r: HelperResult;
    try {
      r = await this.c.envd.run(call.line, {
        ...(this.c.user ? { user: this.c.user } : {}),
        timeoutMs: HELPER_TIMEOUT_MS,
        requestTimeoutMs: this.c.requestTimeoutMs,
      });
    } catch (e) {
      call.finish();
      throw sandboxFailure(`${args[0]} in sandbox ${this.c.envd.sandboxId}`, e);
    }
    if (call.reader) r = { ...r, stdout: call.reader.feed(r.stdout) + call.reader.end() };
    call.finish();
    return r;
  }

  /** A step that changes files: while the sandbox is fresh it waits for the next call, else it runs now. */
  async step(step: Step): Promise<void> {
    if (this.owed.defer(step)) return;
    this.expectOk(await this.run(step.args), step.what);
  }

  expectOk(r: HelperResult, what: string): void {
    if (r.exitCode === 0) return;
    const why = r.stderr.trim().split('\n').pop() ?? '';
    if (r.exitCode === HELPER_UNSAFE_PATH) throw new RedgreenError('SANDBOX_PATH_UNSAFE', why);
    throw new RedgreenError('SANDBOX_FAILED', `e2b: ${what} failed in sandbox ${this.c.envd.sandboxId} (exit ${r.exitCode}): ${why}`);
  }
}
