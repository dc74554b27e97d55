import { randomBytes } from 'node:crypto';
import type Docker from 'dockerode';
import { describeError, RedgreenError } from '../../errors.js';
import { statusOf } from './client.js';
import { SCRATCH_DIR, WORKDIR } from './config.js';
import { startSandboxContainer, type PreparedContainer } from './container.js';
import { execSimple } from './exec.js';
import { ExecMode } from './exec-mode.js';
import { LABEL } from './labels.js';
import { findLayer, layerNoted, markLayerUse, saveLayer } from './layers.js';
import { startOverLayer, type LayeredContainer } from './layer-start.js';
import { judgeLimits } from './limit-probe.js';
import { runWithNetwork } from './network.js';
import * as files from './files.js';
import { fsError } from './paths.js';
import type { CommandInput, CommandRequest, ServerOutcome } from '../core/command-server.js';
import { OutputCapture } from '../core/capture.js';
import type { ExecOptions, ExecResult, FileToWrite, OutputStream, Sandbox, UploadOptions, UploadStats } from '../core/types.js';

export interface DockerSandboxDeps {
  /** The backend's name (docker, podman). */
  backend: string;
  docker: Docker;
  env: Record<string, string>;
  /** The network of commands that opt into it (resolved once per backend). */
  setupNetwork: () => Promise<string>;
  /**
   * Takes the container back once nothing of the sandbox runs: reset for another sandbox when
   * `fit` (and the backend reuses containers), else removed with its volumes. Never throws.
   */
  recycle: (p: PreparedContainer, fit: boolean) => Promise<void>;
  /** Removes a container this sandbox no longer uses, without waiting for it (its volumes stay the sandbox's). Never throws. */
  retire: (p: PreparedContainer) => void;
  /** A container over the layer `key` that the backend started ahead for a sandbox of `image`, if it has one. Never throws. */
  startedAhead: (image: string, key: string) => Promise<LayeredContainer | undefined>;
}

const gone = (p: Promise<unknown>) => p.catch((e: unknown) => (statusOf(e) === 404 ? undefined : Promise.reject(e)));

/**
 * One sandbox: a container with network `none` and its own volumes. Commands run through the
 * container's command server (server.ts), or the Exec API when its image cannot run one; files
 * move as tar archives through the archive API. When a command leaves processes that cannot be
 * killed from inside (a fork bomb at the pids limit), the container is replaced by a fresh one on
 * the same volumes: nothing one command started reaches the next. destroy() hands the container
 * back to the backend, which resets it for the next sandbox of the run or removes it.
 */
export class DockerSandbox implements Sandbox {
  readonly backend: string;
  readonly id: string;
  readonly workdir = WORKDIR;
  readonly scratchDir = SCRATCH_DIR;
  private destroyed = false;
  /** Set when the sandbox cannot go on (its container is gone and could not be replaced). */
  private broken: string | null = null;
  /** A command ran into a limit: the container is not reused. */
  private limitHit = false;
  private replacing?: Promise<void>;
  /** Commands through the Exec API, when the image cannot run the command server. */
  private readonly execMode: ExecMode;
  private readonly running = new Set<Promise<unknown>>();
  private readonly setupContainers = new Set<Docker.Container>();

  constructor(
    private c: PreparedContainer,
    private readonly deps: DockerSandboxDeps,
  ) {
    this.id = c.name;
    this.backend = deps.backend;
    this.execMode = new ExecMode(deps.docker, {
      current: () => this.c,
      replace: (old, why) => this.replace(old, why),
      gone: (old) => (this.destroyed ? 'destroyed' : this.c !== old || this.broken ? 'replaced' : undefined),
    });
  }

  private assertUsable(): void {
    if (this.destroyed) throw new RedgreenError('SANDBOX_DESTROYED', `sandbox ${this.id} was destroyed`);
    if (this.broken) throw new RedgreenError('SANDBOX_FAILED', `sandbox ${this.id} is unusable: ${this.broken}`);
  }

  private track<T>(p: Promise<T>): Promise<T> {
    this.running.add(p);
    return p.finally(() => this.running.delete(p));
  }

  /** How files reach the current container (files.ts). */
  private get files(): files.FilesContext {
    const c = this.c;
    return { run: (argv, o) => this.inside(argv, o), docker: this.deps.docker, container: c.container, server: Boolean(c.server) };
  }

  async exec(command: string | readonly string[], options: ExecOptions = {}): Promise<ExecResult> {
    await this.execMode.sweeping;
    await this.replacing;
    this.assertUsable();
    let cwd = WORKDIR;
    if (options.cwd) {
      const { target, final } = (await files.resolvePaths(this.files, [options.cwd]))[0]!;
      if (!final.dir)
        throw fsError(final.exists ? 'ENOTDIR' : 'ENOENT', `cwd ${JSON.stringify(options.cwd)} is not a folder in the sandbox`);
      cwd = target.abs;
    }
    const argv = typeof command === 'string' ? ['/bin/sh', '-c', command] : [...command];
    if (!argv.length) throw new RedgreenError('USAGE', 'exec needs a command');
    const req: CommandRequest = {
      argv,
      env: { ...this.deps.env, ...options.env },
      cwd,
      timeoutMs: options.timeoutMs,
      maxOutputBytes: options.maxOutputBytes,
      onOutput: options.onOutput,
      signal: options.signal,
    };
    if (options.network) {
      const network = await this.deps.setupNetwork();
      const name = `${this.c.name}-net-${randomBytes(3).toString('hex')}`;
      return this.track(
        runWithNetwork(this.deps.docker, {
          ...req,
          plan: { ...this.c.plan, name, network, labels: { ...this.c.plan.labels, [LABEL.role]: 'network' } },
          track: (c, running) => void (running ? this.setupContainers.add(c) : this.setupContainers.delete(c)),
          stopped: () => this.destroyed,
        }),
      );
    }
    const c = this.c;
    const { result: r, limits } = await this.track(c.server ? this.onServer(c, req) : this.execMode.run(c, req));
    if (!limits || this.c !== c) return r;
    // Which limit a failed command ran into: what the container's counters added since the last command says.
    const hit = r.exitCode !== 0 && !r.aborted ? judgeLimits(c.plan.limits, c.counters, limits, r) : null;
    c.counters = limits.counters;
    if (!hit) return r;
    this.limitHit = true;
    return { ...r, limit: hit };
  }

  /**
   * One command through the container's server. The server frames a command only once nothing it
   * started is left (ok), or says what it could not do: kill (dirty) or fork (nostart), and the
   * container is then replaced. A server that died took the container with it (and a tmpfs
   * volume's content, once no container mounts it): the sandbox cannot go on.
   */
  private async onServer(c: PreparedContainer, req: CommandRequest, input?: CommandInput): Promise<ServerOutcome> {
    let o;
    try {
      o = await c.server!.run(req, input);
    } catch (e) {
      // Removed by destroy() while it ran: the command was killed with its container.
      if (this.destroyed)
        return {
          result: new OutputCapture(req.maxOutputBytes).result(137, { timedOut: false, aborted: false }),
          state: 'ok',
          limits: null,
        };
      const state = await c.container.inspect().then(
        (i) => ` (container ${i.State.Status}, exit ${i.State.ExitCode}${i.State.OOMKilled ? ', out of memory' : ''})`,
        () => '',
      );
      this.broken = `its container's command server failed: ${describeError(e)}${state}`;
      await gone(c.container.remove({ force: true })).catch(() => undefined);
      throw new RedgreenError('SANDBOX_FAILED', `${this.backend}: ${this.broken}`, undefined, { cause: e });
    }
    if (o.state === 'nostart') {
      await this.replace(c, 'no process could be forked in the container');
      throw new RedgreenError(
        'SANDBOX_FAILED',
        'the command could not start: no process could be forked in the sandbox (its pids limit was full); the container was replaced',
      );
    }
    if (o.state === 'dirty') await this.replace(c, 'a command left processes that could not be killed from inside the container');
    return o;
  }

  /** A short internal command (files, path checks, the limit probe) in the current container, as the sandbox user. */
  private async inside(
    argv: string[],
    o: { input?: CommandInput; onOutput?: (stream: OutputStream, chunk: Buffer) => void; maxOutputBytes?: number } = {},
  ): Promise<ExecResult> {
    const c = this.c;
    if (!c.server) return execSimple(this.deps.docker, c.container, argv);
    const req = { argv, env: {}, cwd: '/', internal: true, onOutput: o.onOutput, maxOutputBytes: o.maxOutputBytes };
    return (await this.onServer(c, req, o.input)).result;
  }

  /**
   * Replaces `old` (if still current) with a fresh container on the same volumes, which kills
   * every process in it. The new one starts before the old one goes: a volume's tmpfs lives while
   * a container mounts it. If none can be made, the sandbox is broken (an infrastructure error
   * for whatever comes next), never left running what could not be killed. Never throws.
   */
  private replace(old: PreparedContainer, why: string): Promise<void> {
    if (this.c !== old) return this.replacing ?? Promise.resolve();
    this.replacing ??= (async () => {
      try {
        const fresh = await startSandboxContainer(this.deps.docker, old.plan, `${old.name}-${randomBytes(3).toString('hex')}`);
        this.c = { ...old, ...fresh, counters: { oomKills: 0, pidsMax: 0 } };
      } catch (e) {
        this.broken = `${why}, and no new container could be started (${describeError(e)})`;
      } finally {
        await old.container.remove({ force: true }).catch(() => undefined);
        old.server?.close();
        this.replacing = undefined;
      }
    })();
    return this.replacing;
  }

  /**
   * Moves the sandbox, its workspace still empty, onto a container whose workspace is an overlay
   * over the prepared layer `key` (layers.ts): one the backend started ahead for it when there is
   * one (the empty container then goes back to the backend), else a new one (layer-start.ts), and
   * the old one goes. Null, and the workspace empty again, when there is no such layer or the
   * engine cannot mount it.
   */
  async startLayer(key: string, info?: { cacheDir: string }): Promise<{ bytes: number; ahead?: boolean } | null> {
    this.assertUsable();
    const old = this.c;
    if (!old.server || old.plan.layer) return null;
    // A layer of this cache was noted when it was made (layers.ts): without the note, no engine call.
    if (info && !layerNoted(info.cacheDir, key)) return null;
    let layered: LayeredContainer | null = (await this.deps.startedAhead(old.image, key)) ?? null;
    const ahead = layered !== null;
    if (layered) {
      this.c = layered.container;
      await this.deps.recycle(old, true);
    } else {
      const lower = await findLayer(this.deps.docker, key).catch(() => null);
      layered = lower && (await startOverLayer(this.deps.docker, old, lower, (argv) => this.inside(argv)));
      if (!layered) return null;
      this.c = layered.container;
      this.deps.retire(old);
    }
    if (info) markLayerUse(info.cacheDir, key);
    return { bytes: layered.bytes, ...(ahead ? { ahead } : {}) };
  }

  /** Keeps the workspace (not one over a layer already) as the layer `key` on the engine (layers.ts). */
  async saveLayer(key: string, info: { fixture: string; maxBytes: number; scope: string; cacheDir: string }): Promise<string | null> {
    this.assertUsable();
    const c = this.c;
    if (c.plan.layer) return 'the workspace is already over a layer';
    const du = await this.inside(['du', '-s', '-B1', WORKDIR]);
    const bytes = Number(/^\d+/.exec(du.stdout)?.[0] ?? NaN);
    if (du.exitCode !== 0 || !Number.isFinite(bytes)) return `its size could not be read: ${du.stderr.trim() || `exit ${du.exitCode}`}`;
    if (bytes > info.maxBytes) return `it is larger than the cache's cap (${info.maxBytes} bytes)`;
    // Without stat in the image, the copy cannot compare either: it goes unchecked.
    const dev = await this.inside(['stat', '-c', '%d', WORKDIR]);
    const devNumber = dev.exitCode === 0 && /^\d+\n?$/.test(dev.stdout) ? dev.stdout.trim() : null;
    return saveLayer(this.deps.docker, c.plan, { ...info, key, bytes, dev: devNumber });
  }

  async uploadDir(hostDir: string, options: UploadOptions = {}): Promise<UploadStats> {
    this.assertUsable();
    return files.uploadTree(this.files, hostDir, options);
  }

  async writeFiles(list: readonly FileToWrite[]): Promise<void> {
    this.assertUsable();
    await files.writeFiles(this.files, list);
  }

  async removeFiles(paths: readonly string[]): Promise<void> {
    this.assertUsable();
    await files.removeFiles(this.files, paths);
  }

  async readFile(p: string): Promise<Buffer> {
    this.assertUsable();
    return files.readFile(this.files, p);
  }

  async downloadFile(p: string, hostFile: string): Promise<void> {
    this.assertUsable();
    await files.downloadFile(this.files, p, hostFile);
  }

  async uploadFile(hostFile: string, p: string, options?: { start?: number; mode?: number }): Promise<void> {
    this.assertUsable();
    await files.uploadFile(this.files, hostFile, p, options);
  }

  /**
   * Idempotent and never throws. What still runs is killed by removing its containers; the
   * container then goes back to the backend, to be reset for the next sandbox unless something
   * ran, a limit was hit, or it had to be replaced and could not be.
   */
  async destroy(): Promise<void> {
    if (this.destroyed) return;
    this.destroyed = true;
    await this.replacing;
    const busy = this.running.size > 0 || this.setupContainers.size > 0;
    try {
      if (busy) {
        await Promise.allSettled([this.c.container, ...this.setupContainers].map((c) => gone(c.remove({ force: true }))));
        await Promise.allSettled([...this.running]);
      }
    } finally {
      await this.deps.recycle(this.c, !busy && !this.broken && !this.limitHit);
    }
  }
}
