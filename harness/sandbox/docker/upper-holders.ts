import { randomBytes } from 'node:crypto';
import type Docker from 'dockerode';
import { mount, objectName } from './config.js';
import { startSandboxContainer, type SandboxPlan } from './container.js';
import { LABEL } from './labels.js';
import type { SandboxVolumes } from './volumes.js';

export interface UpperHoldersOptions {
  docker: Docker;
  volumes: SandboxVolumes;
  /** Slots per holder. */
  batch: number;
  /** The plan of a container of `image` named `name` (labels, limits), as the backend makes them. */
  plan: (image: string, name: string) => Promise<SandboxPlan>;
}

interface Holder {
  container: Docker.Container;
  /** Closes its server's input. */
  close: () => void;
  /** Settles when its server ends, closed or not (the container killed, out of memory). */
  dead: Promise<void>;
}

/** Removed before its server's input closes: Podman does not remove a container stopping on its own (server.ts). */
async function removeHolder(h: Holder): Promise<void> {
  await h.container.remove({ force: true }).catch(() => undefined);
  h.close();
}

/** free: not handed out; pending: handed out, its container not started yet; live: its container runs; left: its sandbox is gone. */
type SlotState = 'free' | 'pending' | 'live' | 'left';

interface Batch {
  /** Started, its folders made; rejects when the holder could not be. */
  ready: Promise<Holder>;
  /** Volume prefixes, handed out in order. */
  slots: Map<string, SlotState>;
  /** Set once the holder is being removed. */
  gone?: Promise<void>;
}

/** Where the holder mounts its slots' `ws` volumes. */
const HOLDER_DIR = '/redgreen-uppers';

/**
 * Volumes for sandboxes over a prepared layer whose `ws` tmpfs already holds the overlay's empty
 * `upper` and `work` folders (layers.ts: the overlay volume needs both before the container that
 * mounts it starts, and a tmpfs volume is empty again once no container mounts it).
 *
 * One holder, a small container of the sandbox's image, mounts the `ws` volumes of a batch of
 * future sandboxes, makes the folders in each, and keeps them mounted until each sandbox's own
 * container has started (it then mounts its `ws` itself); then the holder goes. So a sandbox over a
 * layer costs the engine one container start, and a batch one more, where an empty container per
 * sandbox cost two (the engine's CPU: about 300 ms a start here). Each sandbox keeps a tmpfs of its
 * own, so the disk limit still holds per sandbox.
 *
 * A slot is used once. A sandbox's volumes that its holder still mounts when the sandbox ends are
 * removed with the holder (the engine refuses to remove a volume in use).
 */
export class UpperHolders {
  /** By image, the batch slots are taken from. */
  private readonly open = new Map<string, Batch>();
  /** Every batch whose holder may still run, by the prefixes of its slots. */
  private readonly held = new Map<string, Batch>();
  private closed = false;
  /** By image, why a holder could not be made: none is tried again (each try costs a container start). */
  private readonly broken = new Map<string, unknown>();

  constructor(private readonly o: UpperHoldersOptions) {}

  /**
   * A volume prefix (volumes.ts) whose `ws` holds empty `upper` and `work` folders, kept so until
   * its container started (`started`) or the caller gives up (`leave`). Throws when no holder could
   * be made: the caller starts over the layer some other way.
   */
  async take(image: string): Promise<string> {
    if (this.closed) throw new Error('the backend is closing');
    if (this.broken.has(image)) throw this.broken.get(image);
    let b = this.open.get(image);
    let prefix = b && free(b);
    if (!b || !prefix) {
      b = this.makeBatch(image);
      this.open.set(image, b);
      prefix = free(b)!;
    }
    b.slots.set(prefix, 'pending');
    try {
      await b.ready;
      return prefix;
    } catch (e) {
      b.slots.set(prefix, 'left');
      throw e;
    }
  }

  /** The container over `prefix` started: it mounts its `ws` itself now. */
  started(prefix: string): void {
    const b = this.held.get(prefix);
    if (!b || b.slots.get(prefix) !== 'pending') return;
    b.slots.set(prefix, 'live');
    this.check(b);
  }

  /**
   * The sandbox on `prefix` is gone (or its container never started). True when its holder still
   * runs: the volumes go with it, and the caller leaves them; false once the holder is gone (after
   * waiting for its removal): the caller removes them.
   */
  async leave(prefix: string): Promise<boolean> {
    const b = this.held.get(prefix);
    if (!b) return false;
    if (!b.gone) {
      b.slots.set(prefix, 'left');
      this.check(b);
      return true;
    }
    await b.gone;
    return false;
  }

  /** Removes every holder and the volumes no sandbox has. */
  async close(): Promise<void> {
    this.closed = true;
    this.open.clear();
    await Promise.all([...new Set(this.held.values())].map((b) => this.remove(b)));
  }

  /** A batch with every slot handed out and no container still to start over one: its holder goes. */
  private check(b: Batch): void {
    if (![...b.slots.values()].some((s) => s === 'free' || s === 'pending')) void this.remove(b);
  }

  private makeBatch(image: string): Batch {
    const names = Array.from({ length: this.o.batch }, () => objectName('pool', '', randomBytes(4).toString('hex')));
    const b: Batch = { slots: new Map(names.map((n) => [n, 'free'])), ready: this.startHolder(image, names) };
    for (const n of names) this.held.set(n, b);
    b.ready.then(
      (holder) => holder.dead.then(() => this.lost(b, image)),
      // A batch whose holder failed hands out nothing more; what it made goes.
      (e: unknown) => {
        if (!this.broken.has(image)) this.broken.set(image, e);
        if (this.open.get(image) === b) this.open.delete(image);
        void this.remove(b);
      },
    );
    return b;
  }

  /**
   * A holder that ended before its batch was done (killed, out of memory) took its slots' folders
   * with it: the batch hands out nothing more, and the next take makes a new one. A container
   * already starting over one of its slots fails, and its sandbox starts over the layer on its own.
   */
  private lost(b: Batch, image: string): void {
    if (b.gone) return; // removed by this side
    if (this.open.get(image) === b) this.open.delete(image);
    for (const [n, s] of b.slots) if (s === 'free') b.slots.set(n, 'left');
    this.check(b);
  }

  private async startHolder(image: string, slots: string[]): Promise<Holder> {
    const base = await this.o.plan(image, objectName('holder', '', randomBytes(4).toString('hex')));
    await Promise.all(slots.map((s) => this.o.volumes.create(s, { ...base.labels, [LABEL.role]: 'pool' })));
    const plan: SandboxPlan = {
      ...base,
      labels: { ...base.labels, [LABEL.role]: 'holder' },
      // The sh server: the lightest start, and it takes no link (link.ts).
      shellServer: true,
      mounts: slots.map((s, i) => mount(`${s}-ws`, `${HOLDER_DIR}/${i}`)),
    };
    const { container, server } = await startSandboxContainer(this.o.docker, plan, base.volume);
    const holder = { container, close: () => server?.close(), dead: server?.dead ?? Promise.resolve() };
    try {
      if (!server) throw new Error(`the image ${image} has no shell for the command server`);
      const dirs = slots.flatMap((_, i) => [`${HOLDER_DIR}/${i}/upper`, `${HOLDER_DIR}/${i}/work`]);
      // As the sandbox user, as a sandbox's own server makes them (layer-start.ts): the workspace's owner.
      const made = (await server.run({ argv: ['mkdir', ...dirs], env: {}, cwd: '/', internal: true })).result;
      if (made.exitCode !== 0) throw new Error(`the overlay's folders could not be made: ${made.stderr.trim() || `exit ${made.exitCode}`}`);
      // Nothing more is asked of it, but its input stays open: the server ends when it closes, and the container with it.
      return holder;
    } catch (e) {
      await removeHolder(holder);
      throw e;
    }
  }

  /** The holder goes, then the volumes of its slots no container has (never handed out, never started, or left). */
  private remove(b: Batch): Promise<void> {
    b.gone ??= (async () => {
      const holder = await b.ready.catch(() => null);
      if (holder) await removeHolder(holder);
      const unused = [...b.slots].filter(([, s]) => s !== 'live').map(([n]) => n);
      await Promise.all(unused.map((n) => this.o.volumes.remove(n, true)));
      for (const n of b.slots.keys()) this.held.delete(n);
    })();
    return b.gone;
  }
}

const free = (b: Batch) => [...b.slots].find(([, s]) => s === 'free')?.[0];
