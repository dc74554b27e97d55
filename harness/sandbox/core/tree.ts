import {
  chmodSync,
  copyFileSync,
  existsSync,
  constants as fsc,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  symlinkSync,
} from 'node:fs';
import path from 'node:path';
import { RedgreenError } from '../../errors.js';
import { reuseSync, writeNewSync } from './rewrite.js';
import type { UploadOptions, UploadStats } from './types.js';

/** Folders never uploaded: caches and installs that setup recreates. */
export const DEFAULT_EXCLUDES: readonly string[] = ['.git', 'node_modules', '__pycache__', '.pytest_cache', '.venv'];

export type TreeEntry =
  | { kind: 'dir'; rel: string; mode: number }
  | { kind: 'file'; rel: string; mode: number; size: number; /** setuid, setgid or sticky: dropped by a copy. */ special?: true }
  | { kind: 'symlink'; rel: string; target: string };

/**
 * A tree as one walk listed it (walkTree with the default excludes), with the bytes of its small
 * files as that walk's reader read them: a fixture's fingerprint reads every file of it, and its
 * upload copies those entries and bytes instead of listing and reading the tree again (so what a
 * sandbox gets is exactly what was hashed).
 */
export interface ReadTree {
  entries: readonly TreeEntry[];
  /** Files' bytes by path (small files, up to READ_TREE_BYTES in all); the others are read when copied. */
  contents: ReadonlyMap<string, Buffer>;
}

/** The most bytes a ReadTree keeps in memory: a fixture's small files, never a big tree's. */
export const READ_TREE_BYTES = 1024 * 1024;

/**
 * Trees are walked and copied with synchronous calls, which cost a fraction of a promise each,
 * in chunks: between two chunks the event loop runs, so a big tree never holds it for long.
 */
const CHUNK = 256;
const breathe = () => new Promise<void>((resolve) => setImmediate(resolve));

/** A pause for the event loop after every CHUNK calls of it: for a walk whose length is not known ahead. */
export function breather(): () => Promise<void> {
  let since = 0;
  return async () => {
    if (++since < CHUNK) return;
    since = 0;
    await breathe();
  };
}

/** Calls `fn` on each item, letting the event loop run after every CHUNK of them. */
export async function inChunks<T>(items: readonly T[], fn: (item: T) => void): Promise<void> {
  for (let i = 0; i < items.length; i++) {
    if (i && i % CHUNK === 0) await breathe();
    fn(items[i]!);
  }
}

/**
 * Lists a host folder without following symlinks. A symlink is kept only when it points inside
 * the folder; one that leaves it would upload host files into the sandbox, so it is refused.
 * `exclude` names top-level files or folders at any depth; `skip` takes relative paths.
 */
export async function walkTree(
  root: string,
  options: { exclude?: readonly string[]; skip?: readonly string[] } = {},
): Promise<TreeEntry[]> {
  const exclude = new Set(options.exclude ?? DEFAULT_EXCLUDES);
  const skip = new Set(options.skip ?? []);
  const out: TreeEntry[] = [];
  const tick = breather();
  async function visit(dirRel: string): Promise<void> {
    const entries = readdirSync(path.join(root, dirRel), { withFileTypes: true });
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const d of entries) {
      const rel = dirRel ? `${dirRel}/${d.name}` : d.name;
      if (exclude.has(d.name) || skip.has(rel)) continue;
      await tick();
      const abs = path.join(root, rel);
      const st = lstatSync(abs);
      if (st.isSymbolicLink()) {
        const target = readlinkSync(abs);
        const resolved = path.resolve(path.dirname(abs), target);
        const inside = path.relative(root, resolved);
        if (path.isAbsolute(target) || inside === '' || inside.startsWith('..') || path.isAbsolute(inside)) {
          throw new RedgreenError(
            'UPLOAD_UNSAFE',
            `refusing to upload ${rel}: it is a symlink to ${target}, outside the fixture`,
            'replace it with a relative symlink inside the fixture, or with the file itself',
          );
        }
        out.push({ kind: 'symlink', rel, target });
      } else if (st.isDirectory()) {
        out.push({ kind: 'dir', rel, mode: st.mode & 0o777 });
        await visit(rel);
      } else if (st.isFile()) {
        out.push({ kind: 'file', rel, mode: st.mode & 0o777, size: st.size, ...(st.mode & 0o7000 ? { special: true as const } : {}) });
      }
      // Sockets, FIFOs and devices are not part of a repository: skipped.
    }
  }
  await visit('');
  return out;
}

/**
 * What an upload of `root` copies: the entries of `options.tree` (a walk of root) less what it
 * skips, with the bytes it holds, else a new walk (whose files are read as they are copied).
 */
export async function uploadEntries(
  root: string,
  options: UploadOptions = {},
): Promise<{ entries: TreeEntry[]; contents?: ReadonlyMap<string, Buffer> }> {
  if (!options.tree || options.exclude) return { entries: await walkTree(root, options) };
  const skip = options.skip ?? [];
  const entries = options.tree.entries.filter((e) => !skip.some((s) => e.rel === s || e.rel.startsWith(`${s}/`)));
  return { entries, contents: options.tree.contents };
}

/** A file's bytes for an upload: those a ReadTree holds, else read now. */
export function fileBytes(root: string, rel: string, contents?: ReadonlyMap<string, Buffer>): Buffer {
  return contents?.get(rel) ?? readFileSync(path.join(root, rel));
}

/**
 * Files up to this size are copied through memory and written by us (writeNewSync): the kernel's
 * copy (libuv's copyFile) truncates the new file to nothing first, so ext4 writes every copy to
 * disk at its close, and a sandbox's files would each cost a disk write though they are gone a
 * moment later. Bigger files go to the kernel's copy, a reflink where the filesystem has them.
 */
export const SMALL_FILE = 64 * 1024;

/**
 * Copies listed entries from `src` to `dest` (folders first), each file with its mode (without
 * setuid, setgid or sticky bits, which a copy drops); a file's bytes come from `contents` when it
 * has them (a ReadTree's). A small file goes into a spare inode while `spare` gives one (a reused
 * sandbox folder's: host/roots.ts Spares).
 */
export async function copyTree(
  entries: readonly TreeEntry[],
  src: string,
  dest: string,
  contents?: ReadonlyMap<string, Buffer>,
  spare?: () => string | undefined,
): Promise<UploadStats> {
  let bytes = 0;
  let files = 0;
  // Mostly there already (a reused workspace): one look costs less than a mkdir that fails and its stat.
  if (!existsSync(dest)) mkdirSync(dest, { recursive: true });
  for (const e of entries) if (e.kind === 'dir') mkdirSync(path.join(dest, e.rel), { recursive: true });
  await inChunks(entries, (e) => {
    if (e.kind === 'dir') return;
    const to = path.join(dest, e.rel);
    if (e.kind === 'file') {
      if (e.size <= SMALL_FILE) {
        const data = fileBytes(src, e.rel, contents);
        const reused = spare?.();
        if (!reused || !reuseSync(reused, to, data, e.mode)) writeNewSync(to, data, e.mode);
      } else {
        copyFileSync(path.join(src, e.rel), to, fsc.COPYFILE_FICLONE);
        if (e.special) chmodSync(to, e.mode);
      }
      bytes += e.size;
    } else symlinkSync(e.target, to);
    files++;
  });
  return { files, bytes };
}
