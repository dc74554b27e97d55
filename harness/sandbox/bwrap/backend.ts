import { mkdir, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { PACKAGE_ROOT } from '../../config/paths.js';
import { RedgreenError } from '../../errors.js';
import {
  BWRAP_CACHE,
  BWRAP_HOME,
  BWRAP_SCRATCH,
  BWRAP_WORKSPACE,
  bwrapArgs,
  bwrapArgv,
  detectRuntimeRoots,
  type BwrapHost,
  SERVED_ENV,
  systemArgs,
} from './args.js';
import { DEFAULT_LIMITS, limitHit, MIB, SIGXFSZ_EXIT, type LimitHit } from '../core/limits.js';
import { isFull, mountSizeLimit, unmountSizeLimit } from '../host/disk-limit.js';
import { SandboxCgroup, type Limits } from '../host/cgroup.js';
import { sandboxEnv } from '../core/env.js';
import { HostFiles } from '../host/files.js';
import { MARKER_VAR } from '../core/kill-script.js';
import { randomHex } from '../core/random.js';
import { HostRoots } from '../host/roots.js';
import { commandOptions, HostSandbox } from '../host/sandbox.js';
import { writeOwner } from '../host/owner-file.js';
import type { UserNet } from './user-net.js';
import { BWRAP_SERVER_ARGV, BwrapServer, INFO_FD, killNamespaceOf, SHELL_FD } from './server.js';
import { PIPED, SERVED_ENV_FILE, servedEnvScript } from '../host/server-process.js';
import { cleanNamespace, endKept, type Kept } from './kept.js';
import type { ExecOptions, ExecResult, Sandbox, SandboxBackend, SandboxSpec, UploadOptions, UploadStats } from '../core/types.js';
import { runTool } from '../core/tool.js';

export interface BwrapBackendOptions {
  baseDir?: string;
  passEnv?: readonly string[];
  /** Shared npm/pip download cache, bound read-write only into setup (network) commands. */
  cacheDir?: string;
  limits?: Partial<Limits>;
  /** Folders never exposed even if on PATH (the harness's own tree). */
  exclude?: string[];
}

/**
 * bubblewrap: namespaces of its own per sandbox (no network, its own PIDs, a read-only minimal
 * host) over a private workspace, HOME and /tmp that persist between its commands. Commands run
 * one at a time through a command server in those namespaces (server.ts), made when the sandbox
 * is; a command with network, or one asked for while another runs, gets a bwrap of its own. Either
 * way nothing outlives its command.
 */
export class BwrapBackend implements SandboxBackend {
  readonly name = 'bwrap';
  private probed: Promise<void> | undefined;
  private readonly host: BwrapHost;
  private readonly limits: Limits;

  private readonly roots: HostRoots;
  /** What every sandbox's variables are but its marker (the host's allowlisted ones, read once). */
  private readonly baseEnv: Record<string, string>;
  /** The servers of destroyed sandboxes (kept.ts), by the root they serve. */
  private readonly kept = new Map<string, Kept>();

  constructor(private readonly options: BwrapBackendOptions = {}) {
    this.host = { runtimeRoots: detectRuntimeRoots(process.env, [PACKAGE_ROOT, process.cwd(), ...(options.exclude ?? [])]) };
    this.limits = { ...DEFAULT_LIMITS, ...options.limits };
    this.baseEnv = sandboxEnv({
      host: process.env,
      passEnv: options.passEnv,
      fixed: { HOME: BWRAP_HOME, TMPDIR: '/tmp', REDGREEN_WORKSPACE: BWRAP_WORKSPACE, REDGREEN_SCRATCH: BWRAP_SCRATCH },
    });
    // As root, a sandbox's folder is a size-limited tmpfs (host/disk-limit.ts); a reused one keeps its mount.
    this.roots = new HostRoots({
      base: options.baseDir ?? os.tmpdir(),
      prefix: 'redgreen-bwrap-',
      prepare: async (root) => (await mountSizeLimit(root, this.limits.diskMb)).ok,
      unprepare: async (root, sized) => {
        await this.unkeep(root);
        if (sized) await unmountSizeLimit(root);
      },
    });
  }

  /**
   * Fails once, clearly, when bubblewrap is missing or cannot create namespaces here. It binds only
   * the system folders, as a sandbox does: binding all of / failed whenever a mount below it came or
   * went meanwhile (a container of an engine on this host starting or stopping).
   */
  probe(): Promise<void> {
    this.probed ??= runTool('bwrap', ['--unshare-all', '--die-with-parent', ...systemArgs(), 'true'], {
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
    }).then((r) => {
      if (r.code === 0) return;
      const why = r.error?.includes('ENOENT') ? 'bwrap is not installed' : (r.error ?? r.stderr.trim()) || `bwrap exited with ${r.code}`;
      throw new RedgreenError(
        'SANDBOX_FAILED',
        `the bwrap backend cannot start: ${why}`,
        'install bubblewrap (apt-get install -y bubblewrap) on a kernel that allows user namespaces',
      );
    });
    return this.probed;
  }

  async open(): Promise<void> {
    this.roots.open();
  }

  async create(spec: SandboxSpec): Promise<Sandbox> {
    await this.probe();
    const { root, prepared: sized } = await this.roots.take();
    const kept = this.kept.get(root);
    this.kept.delete(root);
    try {
      const id = `${path.basename(root)}-${randomHex(4)}`;
      writeOwner(root, id, spec.runId);
      // Named for its root, as the server that may outlive this sandbox there (gc finds it by the folder).
      const cgroup = kept ? kept.cgroup : await SandboxCgroup.create(path.basename(root), this.limits);
      const keep = (k: Kept) => void this.kept.set(root, k);
      const sandbox = new BwrapSandbox(id, root, this.host, this.limits, cgroup, this.options, this.baseEnv, sized, this.roots, keep);
      if (kept) sandbox.adopt(kept);
      return sandbox;
    } catch (e) {
      if (kept) await endKept(kept);
      await this.roots.give(root);
      throw e;
    }
  }

  /** Ends the server kept with a root that is being removed. */
  private async unkeep(root: string): Promise<void> {
    const kept = this.kept.get(root);
    this.kept.delete(root);
    if (kept) await endKept(kept);
  }

  async close(): Promise<void> {
    await this.roots.close();
    await Promise.all([...this.kept.keys()].map((root) => this.unkeep(root)));
  }
}

class BwrapSandbox extends HostSandbox {
  readonly backend = 'bwrap';
  private readonly env: Record<string, string>;
  /** User-mode networks of commands still running: destroy closes any an exec could not. */
  private readonly nets = new Set<UserNet>();

  constructor(
    id: string,
    root: string,
    private readonly host: BwrapHost,
    private readonly limits: Limits,
    private readonly cgroup: SandboxCgroup | null,
    private readonly options: BwrapBackendOptions,
    /** The backend's variables for every sandbox (BwrapBackend.baseEnv). */
    baseEnv: Record<string, string>,
    /** Whether the sandbox folder is a tmpfs of the disk limit (host/disk-limit.ts). */
    private readonly sized: boolean,
    roots: HostRoots,
    /** Keeps this sandbox's server and cgroup for the next sandbox of its root (kept.ts). */
    private readonly keep: (k: Kept) => void,
  ) {
    const h = (d: string) => path.join(root, d);
    const mounts = [
      { inside: BWRAP_WORKSPACE, host: h('workspace') },
      { inside: BWRAP_SCRATCH, host: h('scratch') },
    ];
    super(id, BWRAP_WORKSPACE, BWRAP_SCRATCH, root, new HostFiles(mounts, h('workspace')), roots);
    this.env = { ...baseEnv, [MARKER_VAR]: id };
  }

  /** A host path of the workspace or scratch folder, as the sandbox sees it. */
  private inside(hostPath: string): string {
    for (const [dir, inside] of [
      ['workspace', BWRAP_WORKSPACE],
      ['scratch', BWRAP_SCRATCH],
    ] as const) {
      const rel = path.relative(path.join(this.root, dir), hostPath);
      if (!rel.startsWith('..') && !path.isAbsolute(rel)) return rel ? `${inside}/${rel}` : inside;
    }
    throw new RedgreenError('SANDBOX_PATH_UNSAFE', `${hostPath} is outside the sandbox`);
  }

  async exec(command: string | readonly string[], options: ExecOptions = {}): Promise<ExecResult> {
    this.assertAlive();
    const cwd = options.cwd ? this.inside(await this.files.toHost(options.cwd)) : BWRAP_WORKSPACE;
    if (typeof command !== 'string' && !command.length) throw new RedgreenError('USAGE', 'exec needs a command');
    const cache = options.network && this.options.cacheDir ? this.options.cacheDir : undefined;
    if (cache) await mkdir(cache, { recursive: true });
    const env = {
      ...this.env,
      ...(cache ? { npm_config_cache: `${BWRAP_CACHE}/npm`, PIP_CACHE_DIR: `${BWRAP_CACHE}/pip` } : {}),
      ...options.env,
      [MARKER_VAR]: this.id,
    };
    const before = await this.cgroup?.counters();
    // Claimed with no await before it runs: a command asked for meanwhile gets a bwrap of its own.
    const server = options.network ? null : await this.claimServer();
    const r = server
      ? await this.throughServer(server, command, cwd, env, options)
      : await this.ownBwrap(command, cwd, env, options, cache);
    const limit = r.exitCode === 0 || r.aborted ? undefined : await this.limitHit(r, before);
    return limit ? { ...r, limit } : r;
  }

  /** The sandbox's command server, started now for the commands to come. */
  private warm(): void {
    void this.serverNow();
  }

  /**
   * The server starts while the files are copied, in time for the first command. Not at create:
   * a sandbox that starts from a prepared layer (startFrom) would stop that server unused.
   */
  override async uploadDir(hostDir: string, options?: UploadOptions): Promise<UploadStats> {
    this.warm();
    return super.uploadDir(hostDir, options);
  }

  private server: Promise<BwrapServer | null> | null = null;
  /** Starts with the server a sandbox destroyed before it kept (create). */
  adopt(kept: Kept): void {
    this.server = Promise.resolve(kept.server);
  }

  private serverNow(): Promise<BwrapServer | null> {
    if (!this.alive) return Promise.resolve(null);
    this.server ??= this.startServer().catch(() => null);
    return this.server;
  }

  private async startServer(): Promise<BwrapServer | null> {
    // The sandbox's variables, once, for the server's commands to source: a request line then
    // names only what differs (host/server-process.ts). Beside the root's folders, out of reach.
    const servedEnvHost = path.join(this.root, SERVED_ENV_FILE);
    await writeFile(servedEnvHost, servedEnvScript(this.env));
    const [file, ...args] = this.launch(
      [
        '--info-fd',
        String(INFO_FD),
        ...bwrapArgs({
          ...this.mountsOf(),
          cwd: '/',
          env: { PATH: this.env.PATH ?? '/usr/bin:/bin' },
          network: false,
          serverShellFd: SHELL_FD,
          servedEnvHost,
        }),
      ],
      BWRAP_SERVER_ARGV,
      { server: true },
    );
    const server = await BwrapServer.start(file!, args, this.root, { PATH: process.env.PATH ?? '/usr/bin:/bin' });
    if (server) server.served = { file: SERVED_ENV, vars: this.env };
    return server;
  }

  /** The server, claimed, when it can take a command now; a dead one is replaced first. Null: the command gets a bwrap of its own. */
  private async claimServer(): Promise<BwrapServer | null> {
    let server = await this.serverNow();
    if (server?.dead) {
      this.server = null;
      await server.kill();
      server = await this.serverNow();
    }
    this.assertAlive();
    return server?.claim() ? server : null;
  }

  private async throughServer(
    server: BwrapServer,
    command: string | readonly string[],
    cwd: string,
    env: Record<string, string>,
    options: ExecOptions,
  ): Promise<ExecResult> {
    const argv = typeof command === 'string' ? ['/bin/sh', '-c', command] : command;
    const req = { argv, env, cwd, ...commandOptions(options), ...(server.served ? { base: server.served } : {}) };
    const out = await this.track(server.run(req), () => server.kill());
    // Something it could not kill: that namespace goes, and the next command gets a new one.
    if (out.state !== 'ok') await server.kill();
    return out.result;
  }

  /**
   * A server started before the overlay was mounted would show its commands the folder under it
   * (its namespace holds the workspace as it was): it goes first, and a new one starts after.
   */
  override async startFrom(tree: string): Promise<boolean> {
    const server = this.server;
    this.server = null;
    await (await server)?.kill();
    try {
      return await super.startFrom(tree);
    } finally {
      this.warm();
    }
  }

  /** A bwrap of its own for one command: with network, or beside a command the server runs. */
  private async ownBwrap(
    command: string | readonly string[],
    cwd: string,
    env: Record<string, string>,
    options: ExecOptions,
    cache: string | undefined,
  ): Promise<ExecResult> {
    // Opened last before the command; if anything in between threw, destroy() would still close it.
    const net = options.network ? await this.openNet() : undefined;
    const a = bwrapArgs({
      ...this.mountsOf(),
      cwd,
      env,
      network: Boolean(options.network),
      ...(cache ? { cacheHost: cache } : {}),
      ...(net ? { resolvConfHost: net.resolvConf } : {}),
    });
    const [file, ...args] = this.launch(a, bwrapArgv(command), { net });
    try {
      return await this.run(file!, args, this.root, { PATH: process.env.PATH ?? '/usr/bin:/bin' }, options);
    } finally {
      if (net) await this.closeNet(net);
    }
  }

  private mountsOf() {
    const h = (d: string) => path.join(this.root, d);
    return { host: this.host, workspaceHost: h('workspace'), scratchHost: h('scratch'), homeHost: h('home'), tmpHost: h('tmp') };
  }

  /**
   * The host command that starts bwrap: under the file-size limit, in the user-mode network's
   * namespace when it has one, and through a shell that joins the sandbox's cgroup before it runs
   * it, so every descendant is in it.
   */
  private launch(bwrap: string[], argv: readonly string[], o: { net?: UserNet; server?: boolean }): string[] {
    const limited = [
      'prlimit',
      `--fsize=${this.limits.fileSizeMb * MIB}`,
      '--',
      ...(o.net?.enter() ?? []),
      'bwrap',
      ...bwrap,
      '--',
      ...argv,
    ];
    const join = this.cgroup ? `${this.cgroup.joinScript()} && ` : '';
    // A server's output on pipes (PIPED); its bwrap reads its shell from SHELL_FD (and closes it).
    if (o.server) return ['/bin/sh', '-c', `${join}exec ${SHELL_FD}</bin/sh && ${PIPED}`, 'sh', ...limited];
    return join ? ['/bin/sh', '-c', `${join}exec "$@"`, 'sh', ...limited] : limited;
  }

  /** A network of its own for one command (never the host's namespace), owned by this sandbox until closed. */
  private async openNet(): Promise<UserNet> {
    // Loaded by the sandboxes that use it: its helpers' process library is heavy to load.
    const { UserNet } = await import('./user-net.js');
    const net = await UserNet.open(this.root);
    this.nets.add(net);
    try {
      this.assertAlive();
    } catch (e) {
      // Destroyed while the network came up: release() has run, so it is closed here.
      await this.closeNet(net);
      throw e;
    }
    return net;
  }

  private async closeNet(net: UserNet): Promise<void> {
    await net.close();
    this.nets.delete(net);
  }

  /**
   * The command's bwrap (whose pid is the process group) reports its exit once its namespace's
   * init is gone, and the kernel removes an init only after everything else in its namespace:
   * killing the init, not bwrap, makes the exit the harness sees mean that nothing of the command
   * is left. Before bwrap has started its init, there is only the group to kill.
   */
  protected override stopCommand(pgid: number | undefined, kill: () => Promise<unknown>): Promise<unknown> {
    return pgid && killNamespaceOf(pgid) ? Promise.resolve() : kill();
  }

  /** Which limit a failed command ran into: the cgroup's counters, SIGXFSZ, a full sandbox folder. */
  private async limitHit(r: ExecResult, before?: { oomKills: number; pidsMax: number }): Promise<LimitHit | undefined> {
    const after = await this.cgroup?.counters();
    if (before && after && after.oomKills > before.oomKills) return limitHit.memory(this.limits.memoryMb * MIB);
    if (r.exitCode === SIGXFSZ_EXIT) return limitHit.fileSize(this.limits.fileSizeMb * MIB);
    if (this.sized && (await isFull(this.root)))
      return limitHit.disk('the sandbox (workspace, HOME, scratch and /tmp)', this.limits.diskMb * MIB);
    if (before && after && after.pidsMax > before.pidsMax) return limitHit.pids(this.limits.pids);
    return undefined;
  }

  protected override async release(): Promise<void> {
    const server = await this.server;
    await Promise.all([...this.nets].map((n) => n.close()));
    // Kept for the next sandbox of its folder, if there is one; not one that started over an
    // overlay (startFrom): its namespace holds that mount.
    const keep = server && this.folderReused && !this.overlaid && server.claim();
    if (keep && (await cleanNamespace(server))) return this.keep({ server, cgroup: this.cgroup });
    await server?.kill();
    await this.cgroup?.remove();
  }
}
