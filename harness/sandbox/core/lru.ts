/**
 * An entry of a store kept under a size cap (the setup cache, prepared layers on the host or an
 * engine, commits' trees and mirrors), listed least recently used first.
 */
export interface LruEntry {
  name: string;
  bytes: number;
  lastUsed: Date;
  /** A sandbox uses it now: never removed. */
  inUse?: boolean;
}

/** What `cache prune` removes: everything, down to a size, or what was not used for some days. */
export type PruneHow = { all: true } | { maxBytes: number } | { olderThanDays: number };

/** Removes an entry; false when its store refused (it is in use after all): it stays. */
type Remove<E> = (e: E) => Promise<boolean | void>;

/** Removes the least recently used entries (`keep` and those in use stay) until the rest fit in `maxBytes`. */
export async function evictLru<E extends LruEntry>(
  entries: readonly E[],
  maxBytes: number,
  keep: string | undefined,
  remove: Remove<E>,
): Promise<E[]> {
  let total = entries.reduce((n, e) => n + e.bytes, 0);
  const removed: E[] = [];
  for (const e of entries) {
    if (total <= maxBytes) break;
    if (e.name === keep || e.inUse || (await remove(e)) === false) continue;
    removed.push(e);
    total -= e.bytes;
  }
  return removed;
}

/** Removes what `how` says of a store's entries (those in use stay); returns them. */
export async function pruneLru<E extends LruEntry>(entries: readonly E[], how: PruneHow, remove: Remove<E>): Promise<E[]> {
  if ('maxBytes' in how) return evictLru(entries, how.maxBytes, undefined, remove);
  const cutoff = 'olderThanDays' in how ? Date.now() - how.olderThanDays * 86_400_000 : Infinity;
  const gone: E[] = [];
  for (const e of entries) if (!e.inUse && e.lastUsed.getTime() < cutoff && (await remove(e)) !== false) gone.push(e);
  return gone;
}
