import { RedgreenError } from '../../errors.js';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { HostFiles } from './files.js';
import { copyTreeExactly, mountOverlay, overlayAllowed, unmountOverlay } from './overlay.js';
import type { HostRoots } from './roots.js';
import { killTree } from './kill.js';
import { PidWindow } from './pid-clock.js';
import { runProcess } from './process.js';
import { CommandKill, type HostServer } from './server.js';
import type { ServedEnv } from './server-process.js';
import { EXEC_MARKER_VAR, MARKER_VAR } from '../core/kill-script.js';
import type { ExecOptions, ExecResult, FileToWrite, Sandbox, UploadOptions, UploadStats } from '../core/types.js';

/** What of a command's options its process or server needs. */
export function commandOptions(o: ExecOptions): Pick<ExecOptions, 'timeoutMs' | 'maxOutputBytes' | 'onOutput' | 'signal'> {
  return { timeoutMs: o.timeoutMs, maxOutputBytes: o.maxOutputBytes, onOutput: o.onOutput, signal: o.signal };
}

/**
 * What the backends whose sandbox is a host folder (local, bwrap) share: files, the running
 * commands, and a destroy that kills every marked process and removes the folder.
 */
export abstract class HostSandbox implements Sandbox {
  abstract readonly backend: string;
  private destroyed = false;
  /** Commands still running, each with the kill of its own process tree. */
  private readonly running = new Map<Promise<unknown>, () => Promise<unknown>>();
  private execs = 0;

  constructor(
    readonly id: string,
    readonly workdir: string,
    readonly scratchDir: string,
    /** The host folder holding everything of this sandbox. */
    protected readonly root: string,
    protected readonly files: HostFiles,
    /** Where the root goes back when the sandbox is destroyed (emptied for another, or removed). */
    private readonly roots: HostRoots,
  ) {}

  abstract exec(command: string | readonly string[], options?: ExecOptions): Promise<ExecResult>;

  /** Whether this sandbox's folder goes to the next sandbox once it is destroyed (within a run). */
  protected get folderReused(): boolean {
    return this.roots.reusing;
  }

  protected get alive(): boolean {
    return !this.destroyed;
  }

  protected assertAlive(): void {
    if (this.destroyed) throw new RedgreenError('SANDBOX_DESTROYED', `sandbox ${this.id} was destroyed`);
  }

  /**
   * Runs one process of this sandbox: it and all it starts carry the sandbox's marker and the
   * command's own (so a timeout or destroy kills exactly its tree, found among the pids handed out
   * since it started), and it is kept known, so destroy can kill it and wait for it.
   */
  protected async run(
    file: string,
    args: readonly string[],
    cwd: string,
    env: Record<string, string>,
    options: ExecOptions,
  ): Promise<ExecResult> {
    const { marker, window, marked } = this.mark(env);
    let pgid: number | undefined;
    const kill = () => killTree(pgid, marker, window);
    const stop = () => this.stopCommand(pgid, kill);
    const run = runProcess(file, args, {
      cwd,
      env: marked,
      ...commandOptions(options),
      killTree: kill,
      stop,
      onSpawn: (group) => (pgid = group),
    });
    try {
      return await this.track(run, stop);
    } finally {
      window?.close();
    }
  }

  /**
   * Runs one command through a host server (server.ts) as run() does, but in the server's process
   * group instead of a session of its own: every member of that group but the server is the
   * command's.
   */
  protected async serve(
    server: HostServer,
    argv: readonly string[],
    cwd: string,
    env: Record<string, string>,
    options: ExecOptions,
    base?: ServedEnv,
  ): Promise<ExecResult> {
    const { marker, window, marked } = this.mark(env);
    const kill = new CommandKill(() => killTree(undefined, marker, window, server.pgid));
    const req = { argv, cwd, env: marked, ...commandOptions(options), ...(base ? { base } : {}) };
    try {
      return (await this.track(server.run(req, kill), () => kill.run())).result;
    } finally {
      window?.close();
    }
  }

  /**
   * A new command's marker (the sandbox's id and the command's number), the window of pids it will
   * be found among, and its environment carrying both markers.
   */
  private mark(env: Record<string, string>) {
    const marker = `${this.id}.${++this.execs}`;
    return { marker, window: PidWindow.open(), marked: { ...env, [MARKER_VAR]: this.id, [EXEC_MARKER_VAR]: marker } };
  }

  /** A command running until `p` settles, that destroy stops with `stop` and waits for. */
  protected async track<T>(p: Promise<T>, stop: () => Promise<unknown>): Promise<T> {
    this.running.set(p, stop);
    try {
      return await p;
    } finally {
      this.running.delete(p);
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

  async downloadFile(p: string, hostFile: string): Promise<void> {
    this.assertAlive();
    return this.files.downloadFile(p, hostFile);
  }

  async uploadFile(hostFile: string, p: string, options?: { start?: number; mode?: number }): Promise<void> {
    this.assertAlive();
    return this.files.uploadFile(hostFile, p, options);
  }

  /**
   * Stops a command that is still running (timeout, abort, destroy). Its exit is reported once
   * the process is gone, and `kill` then runs again for anything left behind.
   */
  protected stopCommand(_pgid: number | undefined, kill: () => Promise<unknown>): Promise<unknown> {
    return kill();
  }

  /** Whether the workspace is an overlay over a prepared tree (unmounted at destroy). */
  protected overlaid = false;

  async startFrom(tree: string): Promise<boolean> {
    this.assertAlive();
    if (!overlayAllowed() || this.overlaid) return false;
    const [upper, work] = [path.join(this.root, '.upper'), path.join(this.root, '.work')];
    mkdirSync(upper);
    mkdirSync(work);
    const mounted = await mountOverlay({ lower: tree, upper, work, target: this.files.workspaceHost });
    this.overlaid = mounted.ok;
    return mounted.ok;
  }

  async saveWorkspace(dest: string): Promise<boolean> {
    this.assertAlive();
    mkdirSync(dest, { recursive: true });
    return (await copyTreeExactly(this.files.workspaceHost, dest)).ok;
  }

  /** Releases what a subclass holds besides the folder (a cgroup). */
  protected async release(): Promise<void> {}

  async destroy(): Promise<void> {
    if (this.destroyed) return;
    this.destroyed = true;
    try {
      await Promise.all([...this.running.values()].map((kill) => kill()));
      await Promise.allSettled([...this.running.keys()]);
      await this.release();
    } catch {
      // destroy never throws; removal below still runs
    }
    // Nothing runs any more: the overlay comes off before its folders are emptied or removed.
    if (this.overlaid) await unmountOverlay(this.files.workspaceHost);
    await this.roots.give(this.root);
  }
}
