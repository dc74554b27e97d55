import { setMaxListeners } from 'node:events';

type Teardown = () => Promise<unknown> | unknown;

/**
 * One run's setup and teardown, in the spirit of Playwright's task runner: each step registers
 * its teardown before its setup runs, so whatever fails part-way (a backend that cannot open, a
 * transcript folder that cannot be written) still gets what was made so far torn down, in reverse
 * order. One signal policy for every command that runs sandboxes: the first SIGINT or SIGTERM
 * aborts the run (sandboxes are destroyed, what finished is written), a second one exits at once.
 * Library callers (the public API) pass an AbortSignal instead: aborting it does what the first
 * Ctrl-C does, and the session touches no process-wide handler.
 */
export class RunSession {
  private readonly controller = new AbortController();
  private readonly teardowns: { name: string; run: Teardown }[] = [];

  constructor(
    private readonly stopping: string,
    private readonly control: { signal?: AbortSignal; handleSignals?: boolean; warn?: (m: string) => void } = {},
  ) {
    // One abort listener per running command: 64 at concurrency 64 is expected, not a leak.
    setMaxListeners(0, this.controller.signal);
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  get interrupted(): boolean {
    return this.controller.signal.aborted;
  }

  /** Runs `setup` with `teardown` already registered; the teardown receives what setup made, if it got that far. */
  async step<T>(name: string, setup: () => Promise<T> | T, teardown?: (made: T | undefined) => Promise<unknown> | unknown): Promise<T> {
    let made: T | undefined;
    if (teardown) this.teardowns.push({ name, run: () => teardown(made) });
    made = await setup();
    return made;
  }

  /** Runs `body` under the signal policy, then every teardown (reverse order, each once, errors reported not thrown). */
  async run<T>(body: (session: RunSession) => Promise<T>): Promise<T> {
    let interrupts = 0;
    const onSignal = (sig: NodeJS.Signals) => {
      if (++interrupts > 1) process.exit(130);
      process.stderr.write(`\n${sig}: stopping — ${this.stopping} (again to quit at once)\n`);
      this.controller.abort();
    };
    const handle = this.control.handleSignals ?? true;
    if (handle) {
      process.on('SIGINT', onSignal);
      process.on('SIGTERM', onSignal);
    }
    const external = this.control.signal;
    const onAbort = () => this.controller.abort(external?.reason);
    if (external?.aborted) onAbort();
    else external?.addEventListener('abort', onAbort, { once: true });
    try {
      return await body(this);
    } finally {
      for (const t of this.teardowns.splice(0).reverse()) {
        try {
          await t.run();
        } catch (e) {
          const message = `teardown "${t.name}" failed: ${(e as Error).message}`;
          if (this.control.warn) this.control.warn(message);
          else process.stderr.write(`warning: ${message}\n`);
        }
      }
      external?.removeEventListener('abort', onAbort);
      if (handle) {
        process.off('SIGINT', onSignal);
        process.off('SIGTERM', onSignal);
      }
    }
  }
}
