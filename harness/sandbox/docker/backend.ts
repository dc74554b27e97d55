import { randomBytes } from 'node:crypto';
import { availableParallelism } from 'node:os';
import type Docker from 'dockerode';
import { RedgreenError } from '../../errors.js';
import { hostCaBundles, makeCaVolume, type CaBundles } from './ca.js';
import { dockerClient, engineFailure, pingEngine, profileOf } from './client.js';
import { dockerLimits, objectName, type DockerLimits } from './config.js';
import { startSandboxContainer, type PreparedContainer, type SandboxPlan } from './container.js';
import { collectGarbage, type GcReport } from './gc.js';
import { DEFAULT_IMAGE, ensureImage, type ImageInfo } from './image.js';
import { LABEL, ownerLabels, type Role } from './labels.js';
import { findLayer, layerBytes, layerNoted, overlayOnLayer } from './layers.js';
import { linkable } from './link.js';
import type { LayeredContainer } from './layer-start.js';
import { resolveSetupNetwork } from './network.js';
import { resetContainer } from './reset.js';
import { DockerSandbox } from './sandbox.js';
import { containerEnv } from './sandbox-env.js';
import { UpperHolders } from './upper-holders.js';
import { SandboxVolumes } from './volumes.js';
import { DEFAULT_LIMITS } from '../core/limits.js';
import { StartsAhead } from '../core/starts-ahead.js';
import { WarmPool } from '../core/warm-pool.js';
import type { RunPlan, Sandbox, SandboxBackend, SandboxSpec } from '../core/types.js';
import { randomHex } from '../core/random.js';

export interface DockerBackendOptions {
  /** The run, for labels; pool containers are made before any fixture asks for one. */
  runId?: string;
  /** Host variables to pass through on top of the allowlist. */
  passEnv?: readonly string[];
  /** The image of fixtures that name none (default: redgreen/runtime:trixie, see `redgreen image build`). */
  image?: string;
  /**
   * Containers of the default image kept started and ready (`--pool N`); as many again may be
   * started ahead over the prepared layers of the fixtures the scheduler says come next.
   */
  pool?: number;
  limits?: Partial<DockerLimits>;
  /** Network of commands that opt into it (default: `bridge` when the engine has one, else redgreen's own bridge; never `host`: network.ts). */
  setupNetwork?: string;
  /** Sandboxes a container serves within a run before it is replaced (default 1,000). */
  maxUses?: number;
  /** Another engine speaking the Docker API (Podman): its client, made by engineClient, and the backend's name. */
  docker?: Docker;
  name?: string;
  /** `sh`: the containers' command server stays the POSIX sh one even in an image with python3 (its tests). */
  server?: 'auto' | 'sh';
}

/**
 * The Docker backend: a container per sandbox (network none, no capabilities, read-only root,
 * limits), through the Engine API wherever DOCKER_HOST points. A run calls `open(runId)` first
 * (leftovers of dead runs are removed, the default image is checked, the pool warms up) and
 * `close()` last, also after Ctrl-C (the pool is drained, anything of this run left is removed).
 * Between the two, a destroyed sandbox's container is reset and handed to the next sandbox of the
 * same image (up to `maxUses` times); outside a run, each sandbox gets a new container.
 */
export class DockerBackend implements SandboxBackend {
  readonly name: string;
  /** Labels everything this instance creates: what close() sweeps. */
  readonly session = randomBytes(6).toString('hex');
  readonly defaultImage: string;
  private readonly docker: Docker;
  private readonly limits: DockerLimits;
  private runId: string;
  private opened?: Promise<GcReport>;
  private closing?: Promise<void>;
  private network?: Promise<string>;
  private ca?: Promise<CaBundles>;
  /** The CA bundles' volume of the run's containers (caVolumeFor). */
  private sharedCa?: Promise<string>;
  private readonly images = new Map<string, Promise<ImageInfo>>();
  /** Between open and close: containers come back for reuse. */
  private reusing = false;
  /** The run's sandboxes at most (open's plan): the pool of the default image makes no more. */
  private planned?: number;
  /**
   * Containers of each image ready for a sandbox: made ahead (`--pool`, the default image only),
   * or reset after a sandbox of the run (counted as on their way while the reset runs).
   */
  private readonly pools = new Map<string, WarmPool<PreparedContainer>>();
  /** Containers started ahead over a prepared layer (expectLayer), by image and layer. */
  private ahead?: StartsAhead<LayeredContainer>;
  /** With `--pool`: announced sandboxes over a layer get their container started ahead, as many as the pool's size. */
  readonly expectLayer?: (spec: SandboxSpec, layer: { key: string; cacheDir: string }) => () => void;
  readonly startsAhead?: number;
  private readonly maxUses: number;
  private readonly shellServer: boolean;
  private readonly volumes: SandboxVolumes;
  /** With `--pool`: the workspaces' tmpfs volumes of containers started ahead over a layer, made ready in batches. */
  private readonly uppers?: UpperHolders;

  constructor(private readonly options: DockerBackendOptions = {}) {
    this.name = options.name ?? 'docker';
    this.docker = options.docker ?? dockerClient();
    this.defaultImage = options.image ?? DEFAULT_IMAGE;
    this.limits = { ...dockerLimits(DEFAULT_LIMITS), ...options.limits };
    this.runId = options.runId ?? 'adhoc';
    // A reset costs the engine nothing; a new container costs it about 200 ms of CPU here (runc, the
    // shim, mounts, the server's start): every 100 sandboxes, 2 ms a fixture, a quarter of a small
    // fixture's own work. The server's memory stays flat over thousands of resets.
    this.maxUses = options.maxUses ?? 1000;
    this.shellServer = options.server === 'sh';
    this.volumes = new SandboxVolumes(this.docker, this.limits);
    if (options.pool) {
      this.expectLayer = (spec, layer) => this.startAhead(spec, layer);
      this.startsAhead = options.pool;
      this.uppers = new UpperHolders({
        docker: this.docker,
        volumes: this.volumes,
        batch: 2 * options.pool,
        plan: async (image, name) => (await this.basePlan(image, this.runId, '', 'holder', name)).plan,
      });
    }
  }

  /** Whether this engine limits the size of the sandbox volumes (Podman before 4.4 does not). */
  get sizedVolumes(): boolean {
    return this.volumes.sized;
  }

  /** Fails, clearly and with a hint, when the engine does not answer or the default image is missing (for `--backend auto`). */
  async probe(): Promise<void> {
    await pingEngine(this.docker, 3000);
    await this.image(this.defaultImage);
  }

  /** Starts a run: what ready() does, and from now until close, containers are reused; the pool makes no more than `plan` can use. */
  async open(runId?: string, plan?: RunPlan): Promise<GcReport> {
    if (plan) {
      this.planned = plan.sandboxes;
      this.pools.get(this.defaultImage)?.expect(plan.sandboxes);
    }
    const report = await this.ready(runId);
    this.reusing = true;
    return report;
  }

  /** Checks the engine and the default image, removes dead runs' leftovers, fills the pool. Idempotent. */
  private ready(runId?: string): Promise<GcReport> {
    this.opened ??= this.doOpen(runId).catch((e: unknown) => {
      // Not cached: the engine may come up, or the image be built, while a run goes on.
      this.opened = undefined;
      throw e;
    });
    return this.opened;
  }

  private async doOpen(runId?: string): Promise<GcReport> {
    if (runId) this.runId = runId;
    await pingEngine(this.docker);
    // Dead runs' leftovers are removed while the first containers are made: those are this run's, alive.
    const [report] = await Promise.all([collectGarbage(this.docker), this.warmUp()]);
    return report;
  }

  /** Checks the default image and, with `--pool`, waits for the pool's first container (the others are made meanwhile). */
  private async warmUp(): Promise<void> {
    await this.image(this.defaultImage);
    // A run that will create no sandbox (every fixture kept or broken) needs no warm one.
    if (!this.options.pool || this.planned === 0) return;
    // Three failed creations in a row mean a broken engine or image: refills stop there.
    const pool = this.poolFor(this.defaultImage);
    void pool.fill();
    await pool.firstReady();
    if (!pool.available) {
      await pool.drain();
      this.pools.delete(this.defaultImage);
      throw engineFailure('warm pool', pool.lastError, this.docker);
    }
  }

  async create(spec: SandboxSpec): Promise<Sandbox> {
    if (this.closing) throw new RedgreenError('SANDBOX_FAILED', `${this.name}: the backend is closed (the run is ending)`);
    await this.ready(spec.runId);
    const image = spec.image ?? this.defaultImage;
    // Only a sandbox of the run the pools were made for gets one of theirs (a reset one, or one made ahead).
    const pool = spec.runId === this.runId ? (this.pools.get(image) ?? (this.reusing ? this.poolFor(image) : undefined)) : undefined;
    const prepared = (await pool?.next()) ?? (await this.prepare(image, spec.runId, spec.fixtureId, 'sandbox'));
    prepared.uses++;
    return new DockerSandbox(prepared, {
      backend: this.name,
      docker: this.docker,
      env: containerEnv(prepared, this.options.passEnv ?? []),
      setupNetwork: () => (this.network ??= resolveSetupNetwork(this.docker, this.options.setupNetwork)),
      recycle: (p, fit) => this.recycle(p, fit),
      retire: (p) => this.retire(p),
      startedAhead: async (image, key) => this.ahead?.take(`${image}\0${key}`),
    });
  }

  /**
   * A sandbox of the run will start from the layer `key`: a container over it is started ahead
   * (on volumes a holder made ready: upper-holders.ts), up to `--pool` at a time, in the
   * order announced. A container start costs the engine half a second or more here: started while
   * other fixtures run, it is not waited for. Returns the withdrawal (the sandbox will not ask).
   */
  private startAhead(spec: SandboxSpec, layer: { key: string; cacheDir: string }): () => void {
    if (!this.reusing || this.closing || spec.runId !== this.runId || !layerNoted(layer.cacheDir, layer.key)) return () => undefined;
    const image = spec.image ?? this.defaultImage;
    this.ahead ??= new StartsAhead<LayeredContainer>({ limit: this.options.pool ?? 0, discard: (l) => this.discard(l.container) });
    return this.ahead.announce(`${image}\0${layer.key}`, () => this.prepareOverLayer(image, layer.key));
  }

  /**
   * A container over the layer `key`, on volumes whose workspace tmpfs a holder keeps ready for the
   * overlay (upper-holders.ts): one container start. Throws when it cannot be made (no such layer,
   * no holder): the sandbox then starts over the layer on its own (DockerSandbox.startLayer).
   */
  private async prepareOverLayer(image: string, key: string): Promise<LayeredContainer> {
    const lower = await findLayer(this.docker, key);
    if (!lower) throw new RedgreenError('SANDBOX_FAILED', `no layer ${key} on the engine`);
    const uppers = this.uppers!;
    const prefix = await uppers.take(image);
    try {
      const container = await this.prepare(image, this.runId, '', 'pool', { prefix, lower });
      uppers.started(prefix);
      return { container, bytes: layerBytes(lower) };
    } catch (e) {
      // Mostly done by prepare's discard already; not when its plan could not be made.
      if (!(await uppers.leave(prefix))) await this.volumes.remove(prefix, true);
      throw e;
    }
  }

  /**
   * A container back from its sandbox: within a run, given back to its image's pool, which keeps
   * it once reset (reset.ts) for the next sandbox; removed instead when the sandbox says it is not
   * fit (something still ran, a limit was hit, it was broken), when it has served `maxUses`
   * sandboxes, or when the reset fails. Only a removal is waited for; a reset goes on meanwhile,
   * and a sandbox created before it ends waits for it. Never throws.
   */
  private async recycle(p: PreparedContainer, fit: boolean): Promise<void> {
    const pool = this.pools.get(p.image);
    if (fit && this.reusing && !this.closing && p.uses < this.maxUses && p.server && p.resettable) {
      (pool ?? this.poolFor(p.image)).giveBack(p, resetContainer(p));
      return;
    }
    pool?.lost(p);
    await this.discard(p);
  }

  /**
   * A container its sandbox moved off (onto a layer): removed, its volumes staying the sandbox's.
   * Nothing waits for the removal (an engine takes a few hundred ms to stop and remove a
   * container, which a sandbox over a layer would otherwise wait before it is ready), but close.
   */
  private retire(p: PreparedContainer): void {
    this.pools.get(p.image)?.lost(p);
    const removal = this.removeContainer(p);
    this.retiring.set(p.volume, removal);
    void removal.finally(() => this.retiring.get(p.volume) === removal && this.retiring.delete(p.volume));
  }

  /** Removals of containers moved off a sandbox (retire) still under way, by the volumes they share with it. */
  private readonly retiring = new Map<string, Promise<void>>();

  /** The pool of an image's containers, made on first use. */
  private poolFor(image: string): WarmPool<PreparedContainer> {
    let pool = this.pools.get(image);
    if (!pool) {
      pool = new WarmPool<PreparedContainer>({
        size: image === this.defaultImage ? (this.options.pool ?? 0) : 0,
        make: () => this.prepare(image, this.runId, '', 'pool'),
        discard: (p) => this.discard(p),
        maxFailures: 3,
        returns: true,
        // An engine on this machine starts containers with its cores: as many at once as it has.
        ...(linkable(this.docker) ? { maxMaking: availableParallelism() } : {}),
      });
      if (image === this.defaultImage && this.planned !== undefined) pool.expect(this.planned);
      this.pools.set(image, pool);
    }
    return pool;
  }

  /** Containers of the default image ready in the pool. */
  get pooled(): number {
    return this.pools.get(this.defaultImage)?.available ?? 0;
  }

  /** Drains the pools (resets still running included) and removes whatever this backend created that is still there. Idempotent. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      this.reusing = false;
      await this.opened?.catch(() => undefined);
      await Promise.all([...[...this.pools.values()].map((pool) => pool.drain()), this.ahead?.drain()]);
      while (this.retiring.size) await Promise.all(this.retiring.values());
      await this.uppers?.close();
      await collectGarbage(this.docker, { match: { [LABEL.session]: this.session }, ignoreLiveness: true }).catch(() => undefined);
    })();
    return this.closing;
  }

  private caBundles(): Promise<CaBundles> {
    return (this.ca ??= hostCaBundles(process.env));
  }

  /**
   * The volume of the host's CA bundles (ca.ts) for a new container. Within a run (its pool's
   * containers included, made while it opens), one for all its containers, made once; outside one,
   * the sandbox's own (`<name>-ca`), removed with its other volumes. Null when the host names none.
   */
  private async caVolumeFor(name: string, image: string, labels: Record<string, string>, role: Role): Promise<string | null> {
    const { archive } = await this.caBundles();
    if (!archive) return null;
    if (!this.reusing && role !== 'pool') {
      await makeCaVolume(this.docker, { name: `${name}-ca`, image, archive, labels });
      return `${name}-ca`;
    }
    if (this.sharedCa) return this.sharedCa;
    const shared = objectName('ca', '', this.session);
    const made = makeCaVolume(this.docker, {
      name: shared,
      image,
      archive,
      labels: { ...labels, [LABEL.role]: 'ca', [LABEL.fixture]: '' },
    }).then(() => shared);
    // A failure is not kept: the next sandbox tries again (what was made is removed by close()).
    made.catch(() => (this.sharedCa = undefined));
    return (this.sharedCa = made);
  }

  private image(name: string): Promise<ImageInfo> {
    let p = this.images.get(name);
    if (!p) {
      p = ensureImage(this.docker, name);
      this.images.set(name, p);
      // A failure is not cached: the image may be built or pulled while the run goes on.
      p.catch(() => this.images.delete(name));
    }
    return p;
  }

  /** What a container of `image` on the volumes `name` is made from: labels, limits, the image's reference and PATH. */
  private async basePlan(
    image: string,
    runId: string,
    fixtureId: string,
    role: Role,
    name: string,
  ): Promise<{ plan: SandboxPlan; path: string }> {
    const info = await this.image(image);
    const labels = { [LABEL.run]: runId, [LABEL.role]: role, [LABEL.fixture]: fixtureId, [LABEL.session]: this.session, ...ownerLabels() };
    const ulimits = profileOf(this.docker).ulimits;
    return {
      path: info.path,
      plan: {
        image: info.ref,
        volume: name,
        labels,
        limits: this.limits,
        ...(ulimits ? { ulimits } : {}),
        ...(this.shellServer ? { shellServer: true } : {}),
      },
    };
  }

  /**
   * Volumes, then the container (network none, its command server attached) on them, started.
   * `over` makes the workspace an overlay over the layer `lower`, on the volumes `prefix` made
   * beforehand (prepareOverLayer).
   */
  private async prepare(
    image: string,
    runId: string,
    fixtureId: string,
    role: Role,
    over?: { prefix: string; lower: Docker.VolumeInspectInfo },
  ): Promise<PreparedContainer> {
    const name = objectName(role === 'pool' ? 'pool' : 'sb', fixtureId, randomHex(4));
    const { plan, path } = await this.basePlan(image, runId, fixtureId, role, over?.prefix ?? name);
    const ca = await this.caBundles();
    const p: PreparedContainer = {
      name,
      image,
      container: this.docker.getContainer(name),
      server: null,
      volume: plan.volume,
      plan,
      imagePath: path,
      env: ca.env,
      resettable: false,
      uses: 0,
      counters: { oomKills: 0, pidsMax: 0 },
    };
    try {
      if (over) {
        // Set first: a failure removes the overlay with the other volumes (discard).
        plan.layer = over.lower.Name;
        if (!(await overlayOnLayer(this.docker, over.prefix, over.lower, plan.labels)))
          throw new Error(`the volumes ${over.prefix} are gone`);
      } else await this.volumes.create(p.volume, plan.labels);
      const caVolume = await this.caVolumeFor(p.volume, plan.image, plan.labels, role);
      if (caVolume) plan.ca = caVolume;
      Object.assign(p, await startSandboxContainer(this.docker, plan, p.name));
      return p;
    } catch (e) {
      await this.discard(p);
      throw engineFailure(`create sandbox ${p.name}`, e, this.docker);
    }
  }

  /**
   * Removes a container, then closes its server's input: Podman does not remove a container that
   * is stopping on its own (its server read the end of its input).
   */
  private async removeContainer(p: PreparedContainer): Promise<void> {
    await p.container.remove({ force: true }).catch(() => undefined);
    p.server?.close();
  }

  /** Never throws: what cannot be removed now is found by close() or `redgreen gc` through its labels. */
  private async discard(p: PreparedContainer): Promise<void> {
    await this.removeContainer(p);
    // The container this one replaced (retire) still mounts these volumes until it is removed.
    await this.retiring.get(p.volume);
    // A holder still mounting its workspace's tmpfs (upper-holders.ts) removes them with it.
    if (!(await this.uppers?.leave(p.volume))) await this.volumes.remove(p.volume, Boolean(p.plan.layer));
    // A sandbox's own CA volume (outside a run), never the run's (a half-made one is close()'s).
    if (p.plan.ca === `${p.volume}-ca`)
      await this.docker
        .getVolume(p.plan.ca)
        .remove()
        .catch(() => undefined);
  }
}
