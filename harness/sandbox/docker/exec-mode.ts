import type Docker from 'dockerode';
import type { PreparedContainer } from './container.js';
import { containerExec, execSimple, SWEEPER } from './exec.js';
import { probeLimits, type LimitReading } from './limit-probe.js';
import type { CommandRequest } from '../core/command-server.js';
import type { ExecResult } from '../core/types.js';

export interface ExecModeHooks {
  /** The sandbox's current container (a replacement changes it). */
  current: () => PreparedContainer;
  /** Replaces a container nothing inside can be trusted to clean any more. Never throws. */
  replace: (c: PreparedContainer, why: string) => Promise<void>;
  /** Why the container an exec ran in is gone, if it is. */
  gone: (c: PreparedContainer) => 'destroyed' | 'replaced' | undefined;
}

/**
 * Commands through the Exec API, for a container whose image cannot run the command server: an
 * exec each (exec.ts), the sweep of what they left once none runs, and, after a failure, one more
 * exec asking which limit it ran into (the server says that in its frames).
 */
export class ExecMode {
  private running = 0;
  /** The sweep under way: a command waits for it. */
  sweeping?: Promise<void>;

  constructor(
    private readonly docker: Docker,
    private readonly hooks: ExecModeHooks,
  ) {}

  async run(c: PreparedContainer, req: CommandRequest): Promise<{ result: ExecResult; limits: LimitReading | null }> {
    this.running++;
    let result: ExecResult;
    try {
      result = await containerExec(this.docker, c.container, {
        ...req,
        onKillFailed: (why) => this.hooks.replace(c, why),
        gone: () => this.hooks.gone(c),
      });
    } finally {
      this.running--;
    }
    const current = () => this.hooks.current() === c;
    if (!this.running && current()) await (this.sweeping ??= this.sweep(c));
    if (result.exitCode === 0 || result.aborted || !current()) return { result, limits: null };
    return { result, limits: await probeLimits((argv) => execSimple(this.docker, c.container, argv)) };
  }

  /**
   * Kills every process of the sandbox user (SWEEPER): also what escaped the wrapper's reap by
   * dropping the marker from its environment. If that cannot start (no pid left) or confirm, the
   * container is replaced.
   */
  private async sweep(c: PreparedContainer): Promise<void> {
    try {
      const r = await execSimple(this.docker, c.container, ['/bin/sh', '-c', SWEEPER]).catch((e: unknown) => e as Error);
      if (r instanceof Error || r.exitCode !== 0)
        await this.hooks.replace(c, `what a command left could not be killed (${r instanceof Error ? r.message : r.stderr.trim()})`);
    } finally {
      this.sweeping = undefined;
    }
  }
}
