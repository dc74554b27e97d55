import { RedgreenError, tailOf } from '../errors.js';
import type { Sandbox } from '../sandbox/core/types.js';

/** One workspace entry as `find -printf` describes it. */
export interface ListedEntry {
  /** f file, d folder, l symlink (others: sockets, fifos … are no part of a setup's result). */
  type: string;
  mode: string;
  size: string;
  mtime: string;
  link: string;
}

export type Listing = Map<string, ListedEntry>;

/** What setup changed in the workspace, as relative paths. */
export interface SetupChanges {
  /** Every entry to archive, parents before children (folders are archived without their contents). */
  write: string[];
  /** The topmost written paths (a new node_modules is one), for the transcript and the guard. */
  roots: string[];
  /** The topmost paths to remove before unpacking: deleted, or replaced by another type. */
  removed: string[];
}

// Type, mode, size, mtime and path, then the symlink target, each record NUL-terminated: one
// command for the whole tree (node_modules has tens of thousands of files), and any byte of a name
// survives. GNU find's -printf is on every backend redgreen targets (the images, the e2b template, the host).
const FORMAT = '%y %m %s %T@ %P\\0%l\\0';
const LISTING_FILE = 'setup-cache.listing';

/** Lists the whole workspace inside the sandbox, without following symlinks. */
export async function listWorkspace(sb: Sandbox): Promise<Listing> {
  const file = `${sb.scratchDir}/${LISTING_FILE}`;
  try {
    const r = await sb.exec(['sh', '-c', 'find . -mindepth 1 -printf "$1" > "$2"', 'sh', FORMAT, file], { timeoutMs: 600_000 });
    if (r.exitCode !== 0) throw new RedgreenError('SANDBOX_FAILED', `listing the workspace failed: ${tailOf(r.stderr || r.stdout)}`);
    return parseListing(await sb.readFile(file));
  } finally {
    await sb.removeFiles([file]).catch(() => undefined);
  }
}

export function parseListing(data: Buffer): Listing {
  const fields = data.toString('utf8').split('\0');
  const out: Listing = new Map();
  for (let i = 0; i + 1 < fields.length; i += 2) {
    const m = /^(\S) (\d+) (\d+) (\S+) ([^]*)$/.exec(fields[i]!);
    if (!m) throw new RedgreenError('SANDBOX_FAILED', `unexpected workspace listing line: ${JSON.stringify(fields[i]!.slice(0, 200))}`);
    out.set(m[5]!, { type: m[1]!, mode: m[2]!, size: m[3]!, mtime: m[4]!, link: fields[i + 1]! });
  }
  return out;
}

const KEPT_TYPES = new Set(['f', 'd', 'l']);

/** The difference between the workspace before and after setup. */
export function diffListings(before: Listing, after: Listing): SetupChanges {
  const write: string[] = [];
  const removed: string[] = [];
  for (const [p, a] of after) {
    if (!KEPT_TYPES.has(a.type)) continue;
    const b = before.get(p);
    if (!b) write.push(p);
    else if (b.type !== a.type || (a.type === 'l' && b.link !== a.link)) {
      // Another kind of entry (or a symlink pointing elsewhere) at the same path: removed first, then unpacked anew.
      removed.push(p);
      write.push(p);
    } else if (a.mode !== b.mode || (a.type === 'f' && (a.size !== b.size || a.mtime !== b.mtime))) write.push(p);
  }
  for (const p of before.keys()) if (!after.has(p)) removed.push(p);
  return { write, roots: topmost(write), removed: topmost(removed) };
}

/** The paths none of whose parents is in the list (sorted). */
export function topmost(paths: readonly string[]): string[] {
  const set = new Set(paths);
  return [...set].filter((p) => !ancestors(p).some((a) => set.has(a))).sort();
}

function ancestors(p: string): string[] {
  const parts = p.split('/');
  return parts.slice(1).map((_, i) => parts.slice(0, i + 1).join('/'));
}
