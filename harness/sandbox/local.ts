import { randomBytes } from 'node:crypto';
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { RedgreenError } from '../errors.js';
import { sandboxEnv } from './env.js';
import { runProcess } from './process.js';
import { killTree, MARKER_VAR } from './kill.js';
import { resolveInside } from './paths.js';
import { copyTree, walkTree } from './tree.js';
import type { ExecOptions, ExecResult, FileToWrite, Sandbox, SandboxBackend, SandboxSpec, UploadOptions, UploadStats } from './types.js';

export interface LocalBackendOptions {
  /** Where sandboxes are created (default: the OS temp dir). */
  baseDir?: string;
  /** Host variables to pass through on top of the allowlist. */
  passEnv?: readonly string[];
  /** Shared package-manager caches (npm, pip) so setup does not download twice. */
  cacheDir?: string;
}

/**
 * The local backend: a private temp folder per sandbox and plain processes. It isolates
 * nothing but the environment and the file paths the harness writes: for trusted fixtures.
 */
export class LocalBackend implements SandboxBackend {
  readonly name = 'local';
  constructor(private readonly options: LocalBackendOptions = {}) {}

  async create(spec: SandboxSpec): Promise<Sandbox> {
    const base = this.options.baseDir ?? os.tmpdir();
    const safeId = spec.fixtureId.replace(/[^A-Za-z0-9_.-]/g, '_').slice(0, 40);
    const root = await mkdtemp(path.join(base, `redgreen-${safeId}-`));
    try {
      await Promise.all(['workspace', 'scratch', 'home', 'tmp'].map((d) => mkdir(path.join(root, d))));
    } catch (e) {
      await rm(root, { recursive: true, force: true });
      throw e;
    }
    return new LocalSandbox(root, spec, this.options);
  }
}

class LocalSandbox implements Sandbox {
  readonly backend = 'local';
  readonly id: string;
  readonly workdir: string;
  readonly scratchDir: string;
  private readonly env: Record<string, string>;
  private destroyed = false;
  private readonly running = new Set<Promise<unknown>>();

  constructor(
    private readonly root: string,
    spec: SandboxSpec,
    options: LocalBackendOptions,
  ) {
    this.id = `${path.basename(root)}-${randomBytes(4).toString('hex')}`;
    this.workdir = path.join(root, 'workspace');
    this.scratchDir = path.join(root, 'scratch');
    const cache = options.cacheDir;
    this.env = sandboxEnv({
      host: process.env,
      passEnv: options.passEnv,
      extra: cache ? { npm_config_cache: path.join(cache, 'npm'), PIP_CACHE_DIR: path.join(cache, 'pip') } : {},
      fixed: {
        HOME: path.join(root, 'home'),
        TMPDIR: path.join(root, 'tmp'),
        [MARKER_VAR]: this.id,
        REDGREEN_WORKSPACE: this.workdir,
        REDGREEN_SCRATCH: this.scratchDir,
      },
    });
    void spec;
  }

  private assertAlive(): void {
    if (this.destroyed) throw new RedgreenError('SANDBOX_DESTROYED', `sandbox ${this.id} was destroyed`);
  }

  async exec(command: string | readonly string[], options: ExecOptions = {}): Promise<ExecResult> {
    this.assertAlive();
    const cwd = options.cwd ? await resolveInside([this.workdir, this.scratchDir], options.cwd, this.workdir) : this.workdir;
    const [file, ...args] = typeof command === 'string' ? ['/bin/sh', '-c', command] : command;
    if (!file) throw new RedgreenError('USAGE', 'exec needs a command');
    const run = runProcess(file, args, {
      cwd,
      env: { ...this.env, ...options.env, [MARKER_VAR]: this.id },
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
    return copyTree(await walkTree(hostDir, options), hostDir, this.workdir);
  }

  async writeFiles(files: readonly FileToWrite[]): Promise<void> {
    this.assertAlive();
    for (const f of files) {
      const dest = await resolveInside([this.workdir, this.scratchDir], f.path, this.workdir);
      await mkdir(path.dirname(dest), { recursive: true });
      await rm(dest, { force: true });
      await writeFile(dest, f.content, { mode: f.mode ?? 0o644 });
      await chmod(dest, f.mode ?? 0o644);
    }
  }

  async removeFiles(paths: readonly string[]): Promise<void> {
    this.assertAlive();
    for (const p of paths) {
      const dest = await resolveInside([this.workdir, this.scratchDir], p, this.workdir);
      await rm(dest, { force: true, recursive: true });
    }
  }

  async readFile(p: string): Promise<Buffer> {
    this.assertAlive();
    return readFile(await resolveInside([this.workdir, this.scratchDir], p, this.workdir));
  }

  async destroy(): Promise<void> {
    if (this.destroyed) return;
    this.destroyed = true;
    try {
      await killTree(undefined, this.id);
      await Promise.allSettled([...this.running]);
    } catch {
      // destroy never throws; removal below still runs
    }
    await rm(this.root, { recursive: true, force: true, maxRetries: 3 }).catch(() => undefined);
  }
}
