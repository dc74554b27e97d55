import { randomBytes } from 'node:crypto';
import type Docker from 'dockerode';
import { describeError, RedgreenError } from '../../errors.js';
import { OWNER, readSingleFile } from './archive.js';
import { engineFailure, profileOf, statusOf } from './client.js';
import { containerOptions, KEEPER, SCRATCH_DIR, volumeNames, WORKDIR, type ContainerPlan } from './config.js';
import { containerExec, execSimple, SWEEPER } from './exec.js';
import { LABEL } from './labels.js';
import { probeLimits, type LimitCounters } from './limit-probe.js';
import { runWithNetwork } from './network.js';
import { assertNoSymlink, fsError, insideRoots, type InsidePath, type PathCheck } from './paths.js';
import { packFiles, packTree } from '../core/tar.js';
import { walkTree } from '../core/tree.js';
import type { ExecOptions, ExecResult, FileToWrite, Sandbox, UploadOptions, UploadStats } from '../core/types.js';

/** A started container with its volume, ready to be handed out as a sandbox. */
export interface PreparedContainer {
  name: string;
  container: Docker.Container;
  volume: string;
  plan: Omit<ContainerPlan, 'cmd' | 'env' | 'workingDir' | 'name' | 'network' | 'user'>;
  /** The image's PATH. */
  imagePath: string;
  /** Variables that point at files copied into this container (CA bundles). */
  env: Record<string, string>;
}

export interface DockerSandboxDeps {
  /** The backend's name (docker, podman). */
  backend: string;
  docker: Docker;
  env: Record<string, string>;
  /** The network of commands that opt into it (resolved once per backend). */
  setupNetwork: () => Promise<string>;
}

const ROOTS = [WORKDIR, SCRATCH_DIR];

/**
 * One sandbox: a container with network `none` and its own volumes. Commands run through the Exec
 * API; files move as tar archives through the archive API; destroy() removes the container, any
 * setup container still running on the volume, and the volumes. When a command leaves processes
 * that cannot be killed from inside (a fork bomb at the pids limit), the container is replaced by
 * a fresh one on the same volumes: nothing one command started reaches the next.
 */
export class DockerSandbox implements Sandbox {
  readonly backend: string;
  readonly id: string;
  readonly workdir = WORKDIR;
  readonly scratchDir = SCRATCH_DIR;
  private destroyed = false;
  /** Set when a container that had to go could not be replaced: nothing can run in the sandbox any more. */
  private broken: string | null = null;
  private replacing?: Promise<void>;
  private sweeping?: Promise<void>;
  /** Commands running in the container now: the sweep waits until none is. */
  private commands = 0;
  /** The current container's limit counters, as the last probe found them (a fresh container starts at 0). */
  private counters: LimitCounters = { oomKills: 0, pidsMax: 0 };
  private readonly running = new Set<Promise<unknown>>();
  private readonly setupContainers = new Set<Docker.Container>();

  constructor(
    private c: PreparedContainer,
    private readonly deps: DockerSandboxDeps,
  ) {
    this.id = c.name;
    this.backend = deps.backend;
    if (profileOf(deps.docker).statFollowsLinks) this.danglingLinks = (abs) => this.linksAmong(abs);
  }

  private readonly danglingLinks?: (abs: string[]) => Promise<string[]>;

  /** Which of these paths are symlinks, asked of a shell in the container. */
  private async linksAmong(abs: string[]): Promise<string[]> {
    const r = await execSimple(this.deps.docker, this.c.container, [
      'sh',
      '-c',
      'for p; do [ -L "$p" ] && echo "$p"; done; true',
      'sh',
      ...abs,
    ]);
    if (r.exitCode !== 0) throw new RedgreenError('SANDBOX_FAILED', `${this.backend}: cannot check paths for symlinks: ${r.stderr.trim()}`);
    return r.stdout.split('\n').filter(Boolean);
  }

  private assertUsable(): void {
    if (this.destroyed) throw new RedgreenError('SANDBOX_DESTROYED', `sandbox ${this.id} was destroyed`);
    if (this.broken) throw new RedgreenError('SANDBOX_FAILED', `sandbox ${this.id} is unusable: ${this.broken}`);
  }

  private track<T>(p: Promise<T>): Promise<T> {
    this.running.add(p);
    return p.finally(() => this.running.delete(p));
  }

  /** A path inside the workspace or scratch folder, with no symlink on the way (checked in the container). */
  private async resolve(p: string): Promise<{ target: InsidePath } & PathCheck> {
    const target = insideRoots(ROOTS, p, WORKDIR);
    return { target, ...(await assertNoSymlink(this.c.container, target, p, this.danglingLinks)) };
  }

  async exec(command: string | readonly string[], options: ExecOptions = {}): Promise<ExecResult> {
    await this.sweeping;
    await this.replacing;
    this.assertUsable();
    let cwd = WORKDIR;
    if (options.cwd) {
      const { target, final } = await this.resolve(options.cwd);
      if (!final.dir)
        throw fsError(final.exists ? 'ENOTDIR' : 'ENOENT', `cwd ${JSON.stringify(options.cwd)} is not a folder in the sandbox`);
      cwd = target.abs;
    }
    const argv = typeof command === 'string' ? ['/bin/sh', '-c', command] : [...command];
    if (!argv.length) throw new RedgreenError('USAGE', 'exec needs a command');
    const env = { ...this.deps.env, ...options.env };
    const common = {
      argv,
      env,
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
          ...common,
          plan: { ...this.c.plan, name, network, labels: { ...this.c.plan.labels, [LABEL.role]: 'network' } },
          track: (c, running) => void (running ? this.setupContainers.add(c) : this.setupContainers.delete(c)),
          stopped: () => this.destroyed,
        }),
      );
    }
    const container = this.c.container;
    this.commands++;
    let r: ExecResult;
    try {
      r = await this.track(
        containerExec(this.deps.docker, container, {
          ...common,
          onKillFailed: (why) => this.replace(container, why),
          gone: () => (this.destroyed ? 'destroyed' : this.c.container !== container || this.broken ? 'replaced' : undefined),
        }),
      );
    } finally {
      this.commands--;
    }
    if (r.exitCode !== 0 && !r.aborted && this.c.container === container) r = await this.withLimit(container, r);
    if (!this.commands && this.c.container === container) await (this.sweeping ??= this.sweep(container));
    return r;
  }

  /**
   * Once no command runs, kills every process of the sandbox user (SWEEPER): also what escaped
   * the wrapper's reap by dropping the marker from its environment (`env -i`, a test's
   * `subprocess.run(env={})`). If that cannot start (no pid left) or confirm, the container is replaced.
   */
  private async sweep(container: Docker.Container): Promise<void> {
    try {
      const r = await execSimple(this.deps.docker, container, ['/bin/sh', '-c', SWEEPER]).catch((e: unknown) => e as Error);
      if (r instanceof Error || r.exitCode !== 0)
        await this.replace(container, `what a command left could not be killed (${r instanceof Error ? r.message : r.stderr.trim()})`);
    } finally {
      this.sweeping = undefined;
    }
  }

  /** Names the limit a failed command ran into, if the container can tell (limit-probe.ts). */
  private async withLimit(container: Docker.Container, r: ExecResult): Promise<ExecResult> {
    const probed = await probeLimits(this.deps.docker, container, this.c.plan.limits, this.counters, r);
    if (!probed || this.c.container !== container) return r;
    this.counters = probed.counters;
    return probed.hit ? { ...r, limit: probed.hit } : r;
  }

  /**
   * Replaces `old` (if still current) with a fresh container on the same volumes, which kills
   * every process in it. The new one starts before the old one goes: a volume's tmpfs lives while
   * a container mounts it. If none can be made, the sandbox is broken (an infrastructure error
   * for whatever comes next), never left running what could not be killed. Never throws.
   */
  private replace(old: Docker.Container, why: string): Promise<void> {
    if (this.c.container !== old) return this.replacing ?? Promise.resolve();
    this.replacing ??= (async () => {
      const name = `${this.c.name}-${randomBytes(3).toString('hex')}`;
      try {
        const fresh = await this.deps.docker.createContainer(
          containerOptions({ ...this.c.plan, name, network: 'none', cmd: KEEPER, user: '0:0' }),
        );
        this.c = { ...this.c, container: fresh };
        await fresh.start();
        this.counters = { oomKills: 0, pidsMax: 0 };
      } catch (e) {
        this.broken = `${why}, and no new container could be started (${describeError(e)})`;
      } finally {
        await old.remove({ force: true }).catch(() => undefined);
        this.replacing = undefined;
      }
    })();
    return this.replacing;
  }

  async uploadDir(hostDir: string, options: UploadOptions = {}): Promise<UploadStats> {
    this.assertUsable();
    const entries = await walkTree(hostDir, options);
    const { pack, done } = packTree(hostDir, entries, { owner: OWNER });
    try {
      const [stats] = await Promise.all([done, this.c.container.putArchive(pack as unknown as NodeJS.ReadableStream, { path: WORKDIR })]);
      return stats;
    } catch (e) {
      // If the engine failed first, the archive must stop reading files (and release them).
      pack.destroy();
      throw engineFailure(`upload ${hostDir}`, e, this.deps.docker);
    }
  }

  async writeFiles(files: readonly FileToWrite[]): Promise<void> {
    this.assertUsable();
    const resolved = await Promise.all(files.map(async (f) => ({ f, ...(await this.resolve(f.path)) })));
    const folder = resolved.find((r) => r.final.dir);
    // Extracting a file over a folder would delete the folder and all it holds.
    if (folder) throw fsError('EISDIR', `cannot write ${folder.f.path}: it is a folder in the sandbox`);
    // One archive per root (workspace, scratch): each is extracted where its paths are relative to.
    for (const root of ROOTS) {
      const mine = resolved.filter((r) => r.target.root === root);
      if (!mine.length) continue;
      const dirs = [...new Set(mine.flatMap((r) => r.missing))].sort((a, b) => a.split('/').length - b.split('/').length);
      const archive = await packFiles(
        mine.map((r) => ({ name: r.target.rel, content: r.f.content, mode: (r.f.mode ?? 0o644) & 0o777 })),
        { owner: OWNER, dirs },
      );
      try {
        await this.c.container.putArchive(archive, { path: root });
      } catch (e) {
        throw engineFailure(`write ${mine.map((r) => r.f.path).join(', ')}`, e, this.deps.docker);
      }
    }
  }

  async removeFiles(paths: readonly string[]): Promise<void> {
    this.assertUsable();
    const targets = await Promise.all(paths.map(async (p) => (await this.resolve(p)).target.abs));
    if (!targets.length) return;
    const r = await execSimple(this.deps.docker, this.c.container, ['rm', '-rf', '--', ...targets]).catch((e: unknown) => {
      throw engineFailure('remove files', e, this.deps.docker);
    });
    if (r.exitCode !== 0)
      throw new RedgreenError('SANDBOX_FAILED', `could not remove ${paths.join(', ')}: ${r.stderr.trim() || `exit ${r.exitCode}`}`);
  }

  async readFile(p: string): Promise<Buffer> {
    this.assertUsable();
    const { target, final } = await this.resolve(p);
    if (!final.exists) throw fsError('ENOENT', `no such file in the sandbox: ${p}`);
    if (final.dir) throw fsError('EISDIR', `not a regular file in the sandbox: ${p}`);
    let archive: NodeJS.ReadableStream;
    try {
      archive = (await this.c.container.getArchive({ path: target.abs })) as NodeJS.ReadableStream;
    } catch (e) {
      if (statusOf(e) === 404) throw fsError('ENOENT', `no such file in the sandbox: ${p}`);
      throw engineFailure(`read ${p}`, e, this.deps.docker);
    }
    const content = await readSingleFile(archive);
    if (!content) throw fsError('EISDIR', `not a regular file in the sandbox: ${p}`);
    return content;
  }

  /** Idempotent and never throws: removing the container kills every process in it. */
  async destroy(): Promise<void> {
    if (this.destroyed) return;
    this.destroyed = true;
    await this.replacing;
    const gone = (p: Promise<unknown>) => p.catch((e: unknown) => (statusOf(e) === 404 ? undefined : Promise.reject(e)));
    try {
      await Promise.allSettled([this.c.container, ...this.setupContainers].map((c) => gone(c.remove({ force: true }))));
      await Promise.allSettled([...this.running]);
      await Promise.all(volumeNames(this.c.volume).map((v) => gone(this.deps.docker.getVolume(v).remove())));
    } catch {
      // Left for the run's close() and `redgreen gc`, which find it by its labels.
    }
  }
}
