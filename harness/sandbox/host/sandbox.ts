import { rm } from 'node:fs/promises';
import { RedgreenError } from '../../errors.js';
import type { HostFiles } from './files.js';
import { killTree } from './kill.js';
import { runProcess } from './process.js';
import { MARKER_VAR } from '../core/kill-script.js';
import type { ExecOptions, ExecResult, FileToWrite, Sandbox, UploadOptions, UploadStats } from '../core/types.js';

/**
 * What the backends whose sandbox is a host folder (local, bwrap) share: files, the running
 * commands, and a destroy that kills every marked process and removes the folder.
 */
export abstract class HostSandbox implements Sandbox {
  abstract readonly backend: string;
  private destroyed = false;
  private readonly running = new Set<Promise<unknown>>();

  constructor(
    readonly id: string,
    readonly workdir: string,
    readonly scratchDir: string,
    /** The host folder holding everything of this sandbox. */
    protected readonly root: string,
    protected readonly files: HostFiles,
  ) {}

  abstract exec(command: string | readonly string[], options?: ExecOptions): Promise<ExecResult>;

  protected assertAlive(): void {
    if (this.destroyed) throw new RedgreenError('SANDBOX_DESTROYED', `sandbox ${this.id} was destroyed`);
  }

  /**
   * Runs one process of this sandbox: it and all it starts carry the sandbox's marker (so a
   * timeout or destroy kills the whole tree), and it is kept known, so destroy can wait for it
   * after killing it.
   */
  protected async run(
    file: string,
    args: readonly string[],
    cwd: string,
    env: Record<string, string>,
    options: ExecOptions,
  ): Promise<ExecResult> {
    const run = runProcess(file, args, {
      cwd,
      env: { ...env, [MARKER_VAR]: this.id },
      timeoutMs: options.timeoutMs,
      maxOutputBytes: options.maxOutputBytes,
      onOutput: options.onOutput,
      signal: options.signal,
      killTree: (pgid) => killTree(pgid, this.id),
    });
    this.running.add(run);
    try {
      return await run;
    } finally {
      this.running.delete(run);
    }
  }

  async uploadDir(hostDir: string, options: UploadOptions = {}): Promise<UploadStats> {
    this.assertAlive();
    return this.files.uploadDir(hostDir, options);
  }

  async writeFiles(files: readonly FileToWrite[]): Promise<void> {
    this.assertAlive();
    return this.files.writeFiles(files);
  }

  async removeFiles(paths: readonly string[]): Promise<void> {
    this.assertAlive();
    return this.files.removeFiles(paths);
  }

  async readFile(p: string): Promise<Buffer> {
    this.assertAlive();
    return this.files.readFile(p);
  }

  /** Releases what a subclass holds besides the folder (a cgroup). */
  protected async release(): Promise<void> {}

  async destroy(): Promise<void> {
    if (this.destroyed) return;
    this.destroyed = true;
    try {
      await killTree(undefined, this.id);
      await Promise.allSettled([...this.running]);
      await this.release();
    } catch {
      // destroy never throws; removal below still runs
    }
    await rm(this.root, { recursive: true, force: true, maxRetries: 3 }).catch(() => undefined);
  }
}
