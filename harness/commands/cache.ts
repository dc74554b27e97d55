import Table from 'cli-table3';
import { z } from 'zod';
import { CACHE_MAX_ENV, cacheMaxBytes, parseSize } from '../config/cache.js';
import { resolvePaths } from '../config/paths.js';
import { RedgreenError } from '../errors.js';
import { SetupCache, type CacheListing } from '../pipeline/setup-cache.js';
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
    key: e.name,
    fixture: m?.fixture ?? null,
    backend: m ? (m.unstable ? `${m.backend} (path differs per sandbox: not kept)` : m.backends.join('+')) : null,
    workdir: m?.workdir ?? null,
    bytes: e.bytes,
    lastUsed: e.lastUsed.toISOString(),
  };
}

/** `redgreen cache list`: every entry, least recently used first, with the total and the cap. */
export async function cacheList(options: CacheListOptions): Promise<number> {
  const cache = userSetupCache();
  const rows = (await cache.list()).map(row);
  const total = rows.reduce((n, r) => n + r.bytes, 0);
  if (options.json) {
    process.stdout.write(`${JSON.stringify({ dir: cache.dir, maxBytes: cache.maxBytes, totalBytes: total, entries: rows }, null, 2)}\n`);
    return 0;
  }
  const table = new Table({ head: ['key', 'fixture', 'backend', 'size', 'last used'], style: { head: [], border: [] } });
  for (const r of rows) table.push([r.key, r.fixture ?? '(unreadable)', r.backend ?? '', bytes(r.bytes), r.lastUsed]);
  const summary = `${rows.length} entr${rows.length === 1 ? 'y' : 'ies'}, ${bytes(total)} of ${bytes(cache.maxBytes)} (${CACHE_MAX_ENV}) in ${cache.dir}`;
  process.stdout.write(`${rows.length ? `${table.toString()}\n` : ''}${summary}\n`);
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
  const removed = await cache.prune(
    options.all
      ? { all: true }
      : options.olderThan !== undefined
        ? { olderThanDays: options.olderThan }
        : { maxBytes: options.max ?? cacheMaxBytes() },
  );
  const left = await cache.list();
  const freed = removed.reduce((n, e) => n + e.bytes, 0);
  const kept = left.reduce((n, e) => n + e.bytes, 0);
  if (options.json) {
    process.stdout.write(
      `${JSON.stringify({ removed: removed.map(row), freedBytes: freed, left: left.length, leftBytes: kept }, null, 2)}\n`,
    );
    return 0;
  }
  const lines = removed.map((e) => `removed ${e.name} (${bytes(e.bytes)})`);
  lines.push(`${removed.length} removed (${bytes(freed)}), ${left.length} left (${bytes(kept)})`);
  process.stdout.write(`${lines.join('\n')}\n`);
  return 0;
}
