import { createReadStream, createWriteStream } from 'node:fs';
import { lstat, open, readFile, readlink, rename, stat, unlink, utimes } from 'node:fs/promises';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { z } from 'zod';
import { DEFAULT_EXCLUDES } from '../sandbox/core/tree.js';
import { FIXTURE_META_FILES } from './patch-phase.js';
import type { ArchiveFile } from './setup-archive.js';
import { sha256 } from '../sandbox/core/sha256.js';

/**
 * One setup cache entry is one file, `<name>.rgcache`: a JSON line describing it, then the tar.
 * One file is replaced atomically as a whole, so a reader never pairs a description with another
 * entry's archive, and its mtime is its last use (touched on every hit) for the LRU eviction. The
 * tar is streamed in and out of it, never held whole in memory.
 */
export const ENTRY_SUFFIX = '.rgcache';

export const EntryMetaSchema = z.object({
  version: z.literal(1),
  key: z.string(),
  fixture: z.string(),
  /** The backend whose setup made it. */
  backend: z.string(),
  /** The backends that may use it (local and bwrap share, see SetupCache.key). */
  backends: z.array(z.string()),
  /** Set when what setup wrote names the workspace's path: usable only where the workspace is at that path. */
  workdir: z.string().nullable(),
  /** A marker, no archive: this backend's workspace path differs per sandbox, so a path-bound setup is not kept. */
  unstable: z.boolean().default(false),
  createdAt: z.string(),
  /** The topmost paths setup wrote, and those it removed. */
  roots: z.array(z.string()),
  removed: z.array(z.string()),
  /** What the fixture holds at each of those paths (see guardOf): a restore must not overwrite a changed fixture file. */
  guard: z.record(z.string(), z.string()),
});
export type EntryMeta = z.infer<typeof EntryMetaSchema>;

export interface Entry {
  meta: EntryMeta;
  /** The tar, inside the entry file after the description line. */
  archive: ArchiveFile;
}

/** An archive of nothing: the entry of a setup that only removed files. */
export const EMPTY_TAR = Buffer.alloc(1024);

/** Writes an entry atomically (a temp file renamed over the old one); `archiveFile` null: an empty tar. */
export async function writeEntry(file: string, meta: EntryMeta, archiveFile: string | null): Promise<void> {
  const tmp = path.join(path.dirname(file), `.${path.basename(file)}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`);
  try {
    const out = createWriteStream(tmp, { flags: 'wx' });
    out.write(`${JSON.stringify(meta)}\n`);
    await pipeline(archiveFile ? createReadStream(archiveFile) : [EMPTY_TAR], out);
    // Its last use, at the same precision as a hit's touch, so the LRU order never depends on which set it.
    await touch(tmp);
    await rename(tmp, file);
  } catch (e) {
    await unlink(tmp).catch(() => undefined);
    throw e;
  }
}

/** Marks an entry as used now (its mtime is its last use). */
export async function touch(file: string): Promise<void> {
  const now = new Date();
  await utimes(file, now, now);
}

/** The entry's description and where its tar lies; null when it is missing or unreadable (a miss, never an error). */
export async function readEntry(file: string): Promise<Entry | null> {
  const head = await readHead(file);
  const size = head && (await stat(file).catch(() => null))?.size;
  if (!head || !size) return null;
  return { meta: head.meta, archive: { file, start: head.start, bytes: size - head.start } };
}

/** Only the description (for `cache list` and eviction), reading no more than its line. */
export async function readEntryMeta(file: string): Promise<EntryMeta | null> {
  return (await readHead(file))?.meta ?? null;
}

async function readHead(file: string): Promise<{ meta: EntryMeta; start: number } | null> {
  const fh = await open(file, 'r').catch(() => null);
  if (!fh) return null;
  try {
    const chunks: Buffer[] = [];
    for (let pos = 0; ;) {
      const { bytesRead, buffer } = await fh.read({ buffer: Buffer.alloc(64 * 1024), position: pos });
      if (!bytesRead) return null;
      const chunk = buffer.subarray(0, bytesRead);
      const nl = chunk.indexOf(0x0a);
      chunks.push(nl < 0 ? chunk : chunk.subarray(0, nl));
      if (nl >= 0) {
        const meta = parseMeta(Buffer.concat(chunks).toString('utf8'));
        return meta ? { meta, start: pos + nl + 1 } : null;
      }
      pos += bytesRead;
    }
  } finally {
    await fh.close();
  }
}

function parseMeta(line: string): EntryMeta | null {
  try {
    const r = EntryMetaSchema.safeParse(JSON.parse(line));
    return r.success ? r.data : null;
  } catch {
    return null;
  }
}

/** Whether the upload puts a fixture path into the workspace (the same rules as uploadDir's). */
function uploaded(rel: string): boolean {
  return !FIXTURE_META_FILES.includes(rel) && !rel.split('/').some((part) => DEFAULT_EXCLUDES.includes(part));
}

/** What the fixture folder holds at a path, as the workspace receives it on upload. */
async function stateOf(fixtureDir: string, rel: string): Promise<string> {
  if (!uploaded(rel)) return 'absent';
  const abs = path.join(fixtureDir, rel);
  const st = await lstat(abs).catch(() => null);
  if (!st) return 'absent';
  if (st.isSymbolicLink()) return `link:${await readlink(abs)}`;
  if (st.isDirectory()) return `dir:${(st.mode & 0o7777).toString(8)}`;
  const sha = sha256(await readFile(abs));
  return `file:${(st.mode & 0o7777).toString(8)}:${sha}`;
}

/**
 * The key hashes the lockfiles, not every source file; an entry replaces or removes files, so it
 * records what the fixture held at each path it touches, and is used only while that still holds
 * (else a restore would put back an old copy of a file the fixture has since changed).
 */
export async function guardOf(fixtureDir: string, paths: readonly string[]): Promise<Record<string, string>> {
  const guard: Record<string, string> = {};
  for (const p of paths) guard[p] = await stateOf(fixtureDir, p);
  return guard;
}

export async function guardHolds(fixtureDir: string, guard: Record<string, string>): Promise<boolean> {
  for (const [p, state] of Object.entries(guard)) if ((await stateOf(fixtureDir, p)) !== state) return false;
  return true;
}
