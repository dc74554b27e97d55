import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type Docker from 'dockerode';
import { describeError } from '../../errors.js';
import { statusOf } from './client.js';
import { mount, overlayVolume, volumeNames } from './config.js';
import type { SandboxPlan } from './container.js';
import { LABEL, labelledVolumes } from './labels.js';
import { runWithNetwork } from './network.js';
import { evictLru, pruneLru, type LruEntry, type PruneHow } from '../core/lru.js';

/**
 * Prepared layers on a Docker engine: a fixture's workspace after upload and setup, kept once (per
 * fixture + setup hash, the key pipeline/workspace-layers.ts makes) in a volume of its own,
 * `redgreen-layer-<key>`, which the engine then mounts as the lower folder of an overlay volume for
 * each sandbox of that fixture: 30,000 files are there without a tar stream through the API. The
 * volume carries no run or owner label (it outlives runs: `redgreen gc` leaves it), only what
 * eviction needs; its tree is `tree/`, copied in under a temporary name and renamed, so a layer
 * whose tree exists is whole.
 */
export const LAYER_LABEL = 'redgreen.layer';
const BYTES_LABEL = 'redgreen.layer-bytes';
/** The setup cache a layer belongs to (WorkspaceLayers.scope): its list, prune and eviction see only its own. */
export const SCOPE_LABEL = 'redgreen.layer-scope';
/** That cache's folder on the host that made it: once it is gone, so is any use of the layer (gc removes it). */
const CACHE_LABEL = 'redgreen.layer-cache';

export function layerVolume(key: string): string {
  return `redgreen-layer-${key}`;
}

/**
 * A layer's last use, as the time of a file in its cache's folder on this host (a volume's labels
 * cannot change): eviction and prune go by it, the least recently used first, as for the others.
 */
const usesOf = (cacheDir: string, key: string) => path.join(cacheDir, 'engine-uses', key);

/** Records that a sandbox started from the layer `key` now. Never throws: a use it cannot note only ages the layer. */
export function markLayerUse(cacheDir: string, key: string): void {
  try {
    mkdirSync(path.dirname(usesOf(cacheDir, key)), { recursive: true });
    writeFileSync(usesOf(cacheDir, key), '');
  } catch {
    // the cache folder is read-only or gone
  }
}

/**
 * Whether this cache folder made or used the layer `key` (its use is noted): a small fixture's
 * start asks the engine for a layer only then, instead of for one it cannot have.
 */
export function layerNoted(cacheDir: string, key: string): boolean {
  return existsSync(usesOf(cacheDir, key));
}

function lastUseOf(made: Date, usesFile: string | undefined): Date {
  const used = usesFile ? statSync(usesFile, { throwIfNoEntry: false })?.mtime : undefined;
  return used && used > made ? used : made;
}

/** The file mode bits, owners and times come along: the copy runs as root, with only the capabilities a copy needs. */
const COPY_CAPS = ['CHOWN', 'DAC_OVERRIDE', 'DAC_READ_SEARCH', 'FOWNER', 'FSETID'];
const COPY_SCRIPT = `[ -d /to/tree ] && exit 0
if [ "$2" != - ] && [ "$(stat -c %d /from)" != "$2" ]; then
  echo "the copy does not see the sandbox's workspace: its volume is another filesystem here (was the volume's mount on the host removed?)" >&2
  exit 3
fi
t="/to/.tmp-$1"
cp -a /from/. "$t" || { rm -rf "$t"; exit 1; }
mv -T "$t" /to/tree 2>/dev/null || rm -rf "$t"`;

/**
 * Keeps the sandbox's workspace volume (`<prefix>-ws`, `bytes` big) as the layer `key`: the volume
 * is made and filled by a short-lived container beside the sandbox (network none, read-only root).
 * A layer someone else finished first is kept as it is. Returns why it was not kept, or null; then
 * the oldest layers beyond `maxBytes` go (a layer a container mounts cannot be removed: it stays).
 *
 * `dev` is the workspace's device number as the sandbox sees it: the copy must see the same. The
 * engine mounts a tmpfs volume once on the host and counts its users; when something else on the
 * host unmounts it (slirp4netns's sandbox did, user-net.ts), the engine still counts it mounted and
 * a new container gets the bare folder beneath: an empty layer, and sandboxes started from it
 * would grade an empty workspace. Then nothing is kept, and the reason says so.
 */
export async function saveLayer(
  docker: Docker,
  plan: SandboxPlan,
  info: { key: string; fixture: string; bytes: number; dev: string | null; maxBytes: number; scope: string; cacheDir: string },
): Promise<string | null> {
  const name = layerVolume(info.key);
  try {
    await docker.createVolume({
      Name: name,
      Labels: {
        [LABEL.role]: 'layer',
        [LAYER_LABEL]: info.key,
        [BYTES_LABEL]: String(info.bytes),
        [LABEL.fixture]: info.fixture,
        [SCOPE_LABEL]: info.scope,
        [CACHE_LABEL]: info.cacheDir,
        [LABEL.host]: os.hostname(),
      },
    });
  } catch (e) {
    return `the layer's volume could not be made: ${describeError(e)}`;
  }
  const copied = await runWithNetwork(docker, {
    argv: ['/bin/sh', '-c', COPY_SCRIPT, 'copy', randomBytes(6).toString('hex'), info.dev ?? '-'],
    env: {},
    cwd: '/',
    maxOutputBytes: 64 * 1024,
    plan: {
      ...plan,
      name: `${plan.volume}-layer-${randomBytes(3).toString('hex')}`,
      network: 'none',
      user: '0:0',
      capAdd: COPY_CAPS,
      labels: { ...plan.labels, [LABEL.role]: 'layer-copy' },
      mounts: [mount(volumeNames(plan.volume)[0]!, '/from', true), mount(name, '/to')],
    },
    track: () => undefined,
    stopped: () => false,
  }).catch((e: unknown) => ({ exitCode: -1, stderr: describeError(e) }));
  if (copied.exitCode !== 0) {
    await removeLayer(docker, name);
    return `copying the workspace into it failed: ${copied.stderr.trim() || `exit ${copied.exitCode}`}`;
  }
  markLayerUse(info.cacheDir, info.key);
  await evictLayers(docker, info.scope, info.maxBytes, name);
  return null;
}

/** Removes a layer volume (and the note of its last use); false when the engine refuses (a container mounts it) or it is gone. */
async function removeLayer(docker: Docker, name: string, usesFile?: string): Promise<boolean> {
  const removed = await docker
    .getVolume(name)
    .remove()
    .then(
      () => true,
      () => false,
    );
  if (removed && usesFile) rmSync(usesFile, { force: true });
  return removed;
}

/** A layer volume as a cache entry; its last use is its last start (markLayerUse), else when it was made. */
export interface EngineLayer extends LruEntry {
  key: string;
  fixture: string;
  /** Where its last use is noted (markLayerUse), when it names its cache folder. */
  usesFile?: string;
}

/** Every layer volume of a cache (`scope`) on this engine, least recently used first, with its size. */
export async function listLayers(docker: Docker, scope: string): Promise<EngineLayer[]> {
  const volumes = await labelledVolumes(docker, [LAYER_LABEL, `${SCOPE_LABEL}=${scope}`]);
  return volumes
    .map((v) => {
      const key = v.Labels?.[LAYER_LABEL] ?? '';
      const dir = v.Labels?.[CACHE_LABEL];
      const usesFile = dir ? usesOf(dir, key) : undefined;
      const made = new Date((v as { CreatedAt?: string }).CreatedAt || 0);
      return {
        name: v.Name,
        key,
        bytes: layerBytes(v),
        fixture: v.Labels?.[LABEL.fixture] ?? '',
        lastUsed: lastUseOf(made, usesFile),
        ...(usesFile ? { usesFile } : {}),
      };
    })
    .sort((a, b) => a.lastUsed.getTime() - b.lastUsed.getTime() || a.name.localeCompare(b.name));
}

/** Removes the least recently used layers of a cache (`keep` stays) until the rest fit in `maxBytes`; one a container mounts stays (the engine refuses). */
export async function evictLayers(docker: Docker, scope: string, maxBytes: number, keep?: string): Promise<EngineLayer[]> {
  return evictLru(await listLayers(docker, scope).catch(() => []), maxBytes, keep, (l) => removeLayer(docker, l.name, l.usesFile));
}

/** `redgreen cache prune` on an engine: a cache's layers, all, down to a size, or those unused for some days (mounted ones stay). */
export async function pruneLayers(docker: Docker, scope: string, how: PruneHow): Promise<EngineLayer[]> {
  return pruneLru(await listLayers(docker, scope), how, (l) => removeLayer(docker, l.name, l.usesFile));
}

/**
 * The layers (of every cache) whose cache folder, on this host, is gone: no run can use them again
 * (a test's or a bench's temporary cache, say). `redgreen gc` and each run's start remove them.
 */
export async function orphanLayers(docker: Docker): Promise<{ name: string; cacheDir: string }[]> {
  const volumes = await labelledVolumes(docker, [LAYER_LABEL, `${LABEL.host}=${os.hostname()}`]);
  return volumes.flatMap((v) => {
    const cacheDir = v.Labels?.[CACHE_LABEL];
    return cacheDir !== undefined && !existsSync(cacheDir) ? [{ name: v.Name, cacheDir }] : [];
  });
}

/** A volume as the engine describes it, or null when there is none. */
const inspectVolume = (docker: Docker, name: string): Promise<Docker.VolumeInspectInfo | null> =>
  docker
    .getVolume(name)
    .inspect()
    .catch((e: unknown) => (statusOf(e) === 404 ? null : Promise.reject(e)));

/** A layer volume's tree size, as its label says (saveLayer). */
export function layerBytes(layer: Docker.VolumeInspectInfo): number {
  return Number(layer.Labels?.[BYTES_LABEL] ?? 0) || 0;
}

/** The layer volume `key` on the engine, or null when there is none (most fixtures: asking first costs one call). */
export function findLayer(docker: Docker, key: string): Promise<Docker.VolumeInspectInfo | null> {
  return inspectVolume(docker, layerVolume(key));
}

/**
 * The overlay volume of a sandbox over a layer (findLayer): the layer's tree below, `upper` and
 * `work` (made empty beforehand in the `ws` tmpfs, which the running container keeps mounted)
 * above. Null when the sandbox's volume is gone. The engine mounts it, on its own host, when a
 * container that names it starts: nothing of the harness's host is involved, so a remote engine
 * works alike.
 */
export async function overlayOnLayer(
  docker: Docker,
  prefix: string,
  lower: Docker.VolumeInspectInfo,
  labels: Record<string, string>,
): Promise<{ layer: string; bytes: number } | null> {
  const upper = await inspectVolume(docker, volumeNames(prefix)[0]!);
  if (!upper) return null;
  await docker.createVolume({
    Name: overlayVolume(prefix),
    Labels: labels,
    DriverOpts: {
      type: 'overlay',
      device: 'overlay',
      o: `lowerdir=${lower.Mountpoint}/tree,upperdir=${upper.Mountpoint}/upper,workdir=${upper.Mountpoint}/work`,
    },
  });
  return { layer: lower.Name, bytes: layerBytes(lower) };
}
