import { existsSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { RedgreenError } from '../../errors.js';
import { sandboxEnv } from '../core/env.js';
import { HostFiles } from './files.js';
import { HostRoots, type Spares } from './roots.js';
import { HostSandbox } from './sandbox.js';
import { HostServers } from './server.js';
import { SERVED_ENV_FILE, servedEnvScript, type ServedEnv } from './server-process.js';
import { writeOwner } from './owner-file.js';
import { killSandboxesOf } from './kill.js';
import { MARKER_VAR } from '../core/kill-script.js';
import { randomHex } from '../core/random.js';
import { resolveInside } from '../core/paths.js';
import type { ExecOptions, ExecResult, Sandbox, SandboxBackend, SandboxSpec } from '../core/types.js';

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
  private readonly roots: HostRoots;
  /** The command servers of every sandbox of this backend. */
  private readonly servers = new HostServers();
  /** The names of the folders its sandboxes had: their ids start with them (close's last look). */
  private readonly folders = new Set<string>();

  /** What every sandbox's variables start from (the host's allowlisted ones, read once). */
  private readonly baseEnv: Record<string, string>;

  constructor(options: LocalBackendOptions = {}) {
    this.roots = new HostRoots({ base: options.baseDir ?? os.tmpdir(), prefix: 'redgreen-local-', spareFiles: true });
    const cache = options.cacheDir;
    this.baseEnv = sandboxEnv({
      host: process.env,
      passEnv: options.passEnv,
      extra: cache ? { npm_config_cache: path.join(cache, 'npm'), PIP_CACHE_DIR: path.join(cache, 'pip') } : {},
      fixed: {},
    });
  }

  async open(): Promise<void> {
    this.roots.open();
  }

  async create(spec: SandboxSpec): Promise<Sandbox> {
    const { root, spares } = await this.roots.take();
    this.folders.add(path.basename(root));
    const sandbox = new LocalSandbox(root, this.baseEnv, this.roots, this.servers, spares);
    writeOwner(root, sandbox.id, spec.runId);
    return sandbox;
  }

  /** Also kills whatever a sandbox's processes left that the kills of their commands missed. */
  async close(): Promise<void> {
    await killSandboxesOf([...this.folders]);
    await this.servers.close();
    await this.roots.close();
  }
}

/** What this process last wrote to each root's file of variables (a reused root keeps it). */
const written = new Map<string, string>();

class LocalSandbox extends HostSandbox {
  readonly backend = 'local';
  private readonly env: Record<string, string>;

  constructor(
    root: string,
    baseEnv: Record<string, string>,
    roots: HostRoots,
    private readonly servers: HostServers,
    spares?: Spares,
  ) {
    const workdir = path.join(root, 'workspace');
    const scratch = path.join(root, 'scratch');
    const files = new HostFiles(
      [workdir, scratch].map((d) => ({ inside: d, host: d })),
      workdir,
      spares && (() => spares.take()),
    );
    super(`${path.basename(root)}-${randomHex(4)}`, workdir, scratch, root, files, roots);
    this.env = {
      ...baseEnv,
      HOME: path.join(root, 'home'),
      TMPDIR: path.join(root, 'tmp'),
      [MARKER_VAR]: this.id,
      REDGREEN_WORKSPACE: workdir,
      REDGREEN_SCRATCH: scratch,
    };
  }

  /**
   * This sandbox's variables as a file its commands' lines source (server-process.ts). Its own
   * marker aside (in each line), they are those of every sandbox of its folder: the file a reused
   * folder keeps is written again only when it differs, or a command removed it.
   */
  private servedEnv(): ServedEnv {
    if (!this.served || !existsSync(this.served.file)) {
      const file = path.join(this.root, SERVED_ENV_FILE);
      const { [MARKER_VAR]: _marker, ...vars } = this.env;
      const script = servedEnvScript(vars);
      if (written.get(file) !== script || !existsSync(file)) {
        writeFileSync(file, script);
        written.set(file, script);
      }
      this.served = { file, vars };
    }
    return this.served;
  }

  private served?: ServedEnv;

  async exec(command: string | readonly string[], options: ExecOptions = {}): Promise<ExecResult> {
    this.assertAlive();
    const cwd = options.cwd ? await resolveInside([this.workdir, this.scratchDir], options.cwd, this.workdir) : this.workdir;
    const argv = typeof command === 'string' ? ['/bin/sh', '-c', command] : command;
    const [file, ...args] = argv;
    if (!file) throw new RedgreenError('USAGE', 'exec needs a command');
    const env = { ...this.env, ...options.env };
    const server = await this.servers.take();
    if (!server) return this.run(file, args, cwd, env, options);
    if (!this.alive) server.release();
    this.assertAlive();
    return this.serve(server, argv, cwd, env, options, this.servedEnv());
  }
}
