import type Docker from 'dockerode';
import path from 'node:path';
import { z } from 'zod';
import { CACHE_MAX_ENV, cacheMaxBytes, parseSize } from '../config/cache.js';
import { resolvePaths } from '../config/paths.js';
import { RedgreenError } from '../errors.js';
import { listCodeCaches, removeCodeCache } from '../code-cache.js';
import { renderGrid } from '../reporters/grid.js';
import { SetupCache, type CacheListing } from '../pipeline/setup-cache.js';
import { mirrorCache, treeCache } from '../fixtures/folder-cache.js';
import { pruneLru, type LruEntry, type PruneHow } from '../sandbox/core/lru.js';
import type { LayerListing } from '../pipeline/workspace-layers.js';
import type { EngineLayer } from '../sandbox/docker/layers.js';
import { bytes } from '../transcripts/replay-format.js';
import { numberFromCli } from './compare.js';

const sizeFromCli = z.string().transform((v, ctx) => {
  const n = parseSize(v);
  if (n === null) {
    ctx.addIssue({ code: 'custom', message: `must be a size such as 2GiB, 500MB or 0, got ${JSON.stringify(v)}` });
    return z.NEVER;
  }
  return n;
});

export const CacheListOptionsSchema = z.object({ json: z.boolean().default(false) });
export type CacheListOptions = z.infer<typeof CacheListOptionsSchema>;

export const CachePruneOptionsSchema = z.object({
  all: z.boolean().default(false),
  max: sizeFromCli.optional(),
  olderThan: numberFromCli(0, ' (days)').optional(),
  json: z.boolean().default(false),
});
export type CachePruneOptions = z.infer<typeof CachePruneOptionsSchema>;

/** The setup cache of this user (`$XDG_CACHE_HOME/redgreen/setup`), the one selfcheck and run use. */
export function userSetupCache(): SetupCache {
  return SetupCache.under(resolvePaths({}).cacheDir);
}

function row(e: CacheListing) {
  const m = e.meta;
  return {
    kind: 'setup' as const,
    key: e.name,
    fixture: m?.fixture ?? null,
    backend: m ? (m.unstable ? `${m.backend} (path differs per sandbox: not kept)` : m.backends.join('+')) : null,
    workdir: m?.workdir ?? null,
    bytes: e.bytes,
    lastUsed: e.lastUsed.toISOString(),
  };
}

function layerRow(l: LayerListing) {
  return {
    kind: 'layer' as const,
    key: l.name,
    fixture: l.meta?.fixture ?? null,
    backend: l.meta?.backends.join('+') ?? null,
    workdir: l.meta?.workdir ?? null,
    bytes: l.bytes,
    lastUsed: l.lastUsed.toISOString(),
    inUse: l.inUse,
  };
}

/** A commit's tree or a repository mirror (fixtures by reference, `new --from-commit`, `mine`, `import`), or the CLI's compiled code for one Node version. */
function folderRow(kind: 'tree' | 'mirror' | 'code', f: LruEntry) {
  return {
    kind,
    key: f.name,
    fixture: null,
    backend: null,
    workdir: null,
    bytes: f.bytes,
    lastUsed: f.lastUsed.toISOString(),
    inUse: f.inUse ?? false,
  };
}

/** The commits' trees, the mirrors and the code caches of this user's cache folder. */
async function folderRows(cacheDir: string) {
  return [
    ...(await treeCache(cacheDir).list()).map((f) => folderRow('tree', f)),
    ...(await mirrorCache(cacheDir).list()).map((f) => folderRow('mirror', f)),
    ...(await listCodeCaches(cacheDir)).map((f) => folderRow('code', f)),
  ];
}

/** Prunes trees, mirrors and code caches as `how` says, each kind on its own (trees and mirrors a live process read stay). */
async function pruneFolders(cacheDir: string, how: PruneHow) {
  const out = [];
  for (const [kind, store] of [
    ['tree', treeCache(cacheDir)],
    ['mirror', mirrorCache(cacheDir)],
  ] as const)
    out.push(...(await pruneLru(await store.list(), how, (f) => store.remove(f))).map((f) => folderRow(kind, f)));
  out.push(...(await pruneLru(await listCodeCaches(cacheDir), how, removeCodeCache)).map((f) => folderRow('code', f)));
  return out;
}

/** A prepared layer kept by a container engine (sandbox/docker/layers.ts). */
function engineLayerRow(engine: string, l: EngineLayer) {
  return {
    kind: 'layer' as const,
    key: l.key,
    fixture: l.fixture || null,
    backend: engine,
    workdir: null,
    bytes: l.bytes,
    lastUsed: l.lastUsed.toISOString(),
    engine,
  };
}

/**
 * The prepared layers of the container engines that answer here (Docker, Podman), through `each`;
 * an engine that does not answer has none to show. Loaded only now: the cache commands of a
 * machine without engines need no engine client.
 */
async function onEngines<T>(
  each: (docker: Docker, engine: string, layers: typeof import('../sandbox/docker/layers.js')) => Promise<T[]>,
): Promise<T[]> {
  const [{ dockerClient, pingEngine }, { podmanClient }, layers] = await Promise.all([
    import('../sandbox/docker/client.js'),
    import('../sandbox/podman/client.js'),
    import('../sandbox/docker/layers.js'),
  ]);
  const engines: [string, () => Docker][] = [
    ['docker', dockerClient],
    ['podman', podmanClient],
  ];
  const rows = await Promise.all(
    engines.map(async ([engine, client]) => {
      try {
        const docker = client();
        await pingEngine(docker, 2000);
        return await each(docker, engine, layers);
      } catch {
        return [];
      }
    }),
  );
  return rows.flat();
}

/**
 * `redgreen cache list`: every setup entry and every prepared layer (a setup's result as a folder
 * sandboxes mount copy-on-write, or a volume a container engine mounts), least recently used
 * first, with the totals and the cap (each kind).
 */
export async function cacheList(options: CacheListOptions): Promise<number> {
  const cache = userSetupCache();
  const scope = cache.layers?.scope ?? '';
  const rows = (await cache.list()).map(row);
  const layers = [
    ...((await cache.layers?.list()) ?? []).map(layerRow),
    ...(await onEngines(async (docker, engine, l) => (await l.listLayers(docker, scope)).map((e) => engineLayerRow(engine, e)))),
  ];
  const folders = await folderRows(resolvePaths({}).cacheDir);
  const total = rows.reduce((n, r) => n + r.bytes, 0);
  const layerTotal = layers.reduce((n, r) => n + r.bytes, 0);
  const folderTotal = folders.reduce((n, r) => n + r.bytes, 0);
  if (options.json) {
    process.stdout.write(
      `${JSON.stringify(
        {
          dir: cache.dir,
          maxBytes: cache.maxBytes,
          totalBytes: total,
          entries: rows,
          layerBytes: layerTotal,
          layers,
          folderBytes: folderTotal,
          folders,
        },
        null,
        2,
      )}\n`,
    );
    return 0;
  }
  const table = [...rows, ...layers, ...folders].map((r) => [
    r.kind,
    r.key,
    r.fixture ?? (r.kind === 'tree' || r.kind === 'mirror' || r.kind === 'code' ? '' : '(unreadable)'),
    r.backend ?? '',
    bytes(r.bytes),
    `${r.lastUsed}${'inUse' in r && r.inUse ? ' (in use)' : ''}`,
  ]);
  const summary =
    `${rows.length} entr${rows.length === 1 ? 'y' : 'ies'}, ${bytes(total)}, ${layers.length} prepared layer(s), ${bytes(layerTotal)} ` +
    `and ${folders.length} tree(s), mirror(s) and code cache(s), ${bytes(folderTotal)}; each kind up to ${bytes(cache.maxBytes)} (${CACHE_MAX_ENV}) in ${path.dirname(cache.dir)}`;
  process.stdout.write(
    `${rows.length + layers.length + folders.length ? `${renderGrid(['kind', 'key', 'fixture', 'backend', 'size', 'last used'], table)}\n` : ''}${summary}\n`,
  );
  return 0;
}

/** `redgreen cache prune`: down to the cap (default), to --max, entries unused for --older-than days, or --all. */
export async function cachePrune(options: CachePruneOptions): Promise<number> {
  const chosen = [options.all && '--all', options.max !== undefined && '--max', options.olderThan !== undefined && '--older-than'].filter(
    Boolean,
  );
  if (chosen.length > 1)
    throw new RedgreenError(
      'USAGE',
      `${chosen.join(' and ')} cannot be combined`,
      'choose one of --all, --max <size>, --older-than <days>',
    );
  const cache = userSetupCache();
  const scope = cache.layers?.scope ?? '';
  const how = options.all
    ? ({ all: true } as const)
    : options.olderThan !== undefined
      ? { olderThanDays: options.olderThan }
      : { maxBytes: options.max ?? cacheMaxBytes() };
  const cacheDir = resolvePaths({}).cacheDir;
  // Layers in use by a running sandbox, and trees and mirrors a live process read, are kept whatever the request.
  const removed = [
    ...(await cache.prune(how)).map(row),
    ...((await cache.layers?.prune(how)) ?? []).map(layerRow),
    ...(await onEngines(async (docker, engine, l) => (await l.pruneLayers(docker, scope, how)).map((e) => engineLayerRow(engine, e)))),
    ...(await pruneFolders(cacheDir, how)),
  ];
  const left = [
    ...(await cache.list()).map(row),
    ...((await cache.layers?.list()) ?? []).map(layerRow),
    ...(await onEngines(async (docker, engine, l) => (await l.listLayers(docker, scope)).map((e) => engineLayerRow(engine, e)))),
    ...(await folderRows(cacheDir)),
  ];
  const freed = removed.reduce((n, e) => n + e.bytes, 0);
  const kept = left.reduce((n, e) => n + e.bytes, 0);
  if (options.json) {
    process.stdout.write(`${JSON.stringify({ removed, freedBytes: freed, left: left.length, leftBytes: kept }, null, 2)}\n`);
    return 0;
  }
  const what = { setup: '', layer: 'prepared layer ', tree: 'tree ', mirror: 'mirror ', code: 'code cache ' } as const;
  const lines = removed.map((e) => `removed ${what[e.kind]}${e.key} (${bytes(e.bytes)})`);
  lines.push(`${removed.length} removed (${bytes(freed)}), ${left.length} left (${bytes(kept)})`);
  process.stdout.write(`${lines.join('\n')}\n`);
  return 0;
}
