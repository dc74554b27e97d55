import { createReadStream } from 'node:fs';
import path from 'node:path';
import tar from 'tar-stream';
import { fileBytes, type TreeEntry } from './tree.js';
import type { UploadStats } from './types.js';

// Tar archives, the one way trees and files travel between the host and a sandbox: streamed to an
// engine (Docker), collected into one request body (e2b), or read back out (host archive/extract).

/** Who owns the entries of an archive: whoever extracts it with owners (the Docker engine) applies them. */
export interface TarOwner {
  uid: number;
  gid: number;
  uname?: string;
  gname?: string;
}

export interface PackOptions {
  /** Prepended to every entry name (`workspace` → `workspace/src/a.py`). */
  prefix?: string;
  /** Default: root (uid 0, gid 0), tar-stream's own default. */
  owner?: TarOwner;
  /** Small files' bytes already read (a ReadTree's): not read again. */
  contents?: ReadonlyMap<string, Buffer> | undefined;
}

export type TarHeader = Parameters<tar.Pack['entry']>[0];

/** Files up to this size are read in one synchronous call: a stream each costs more than a small fixture's file. */
const SMALL_FILE = 1024 * 1024;

/** Adds one entry whose body is in memory. */
export function tarEntry(pack: tar.Pack, header: TarHeader, body: Buffer | string = ''): Promise<void> {
  return new Promise((resolve, reject) => {
    pack.entry(header, body, (err) => (err ? reject(err) : resolve()));
  });
}

/** Streams a body into one archive entry, with backpressure (tar-stream's sinks are streamx streams). */
export async function streamEntry(pack: tar.Pack, header: TarHeader, body: AsyncIterable<unknown>): Promise<void> {
  let settle!: (err?: Error | null) => void;
  const written = new Promise<void>((resolve, reject) => (settle = (err) => (err ? reject(err) : resolve())));
  const sink = pack.entry(header, (err) => settle(err));
  for await (const chunk of body) {
    if (!sink.write(chunk)) await new Promise<void>((resolve) => sink.once('drain', () => resolve()));
  }
  sink.end(null);
  await written;
}

/**
 * One archive of a host tree listed by `walkTree` (so escaping symlinks were already refused),
 * read from disk as it is sent (small files at once, others streamed): folders and files with
 * their modes, inner symlinks. `pack` is the archive
 * to send; `done` settles with the counts once every entry is in it, or with the first read error
 * (the archive is then destroyed with it).
 */
export function packTree(root: string, entries: readonly TreeEntry[], o: PackOptions = {}): { pack: tar.Pack; done: Promise<UploadStats> } {
  const pack = tar.pack();
  const named = (rel: string) => ({ name: o.prefix ? `${o.prefix}/${rel}` : rel, ...o.owner });
  const done = (async () => {
    let files = 0;
    let bytes = 0;
    for (const e of entries) {
      if (e.kind === 'dir') await tarEntry(pack, { ...named(e.rel), type: 'directory', mode: e.mode });
      else if (e.kind === 'symlink') {
        await tarEntry(pack, { ...named(e.rel), type: 'symlink', linkname: e.target, mode: 0o777 });
        files++;
      } else {
        const header = { ...named(e.rel), type: 'file' as const, mode: e.mode, size: e.size };
        if (e.size <= SMALL_FILE) await tarEntry(pack, header, fileBytes(root, e.rel, o.contents));
        else await streamEntry(pack, header, createReadStream(path.join(root, e.rel)));
        files++;
        bytes += e.size;
      }
    }
    pack.finalize();
    return { files, bytes };
  })();
  done.catch((err: unknown) => pack.destroy(err as Error));
  return { pack, done };
}

/** The whole archive in memory, for transports that send one body. Rejects with the packing error. */
export async function tarBuffer(pack: tar.Pack): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of pack) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

/** `packTree`, collected in memory. */
export async function packTreeBuffer(
  root: string,
  entries: readonly TreeEntry[],
  o: PackOptions = {},
): Promise<{ archive: Buffer; stats: UploadStats }> {
  const { pack, done } = packTree(root, entries, o);
  const [archive, stats] = await Promise.all([tarBuffer(pack), done]);
  return { archive, stats };
}

/** A file for an archive of in-memory files. */
export interface TarFile {
  /** Relative to the folder the archive is extracted in. */
  name: string;
  content: Buffer | string;
  mode: number;
}

/** Runs `fill` to write entries into a new archive and returns it; on failure nothing is left pending. */
export async function buildTar(fill: (pack: tar.Pack) => Promise<void>): Promise<Buffer> {
  const pack = tar.pack();
  const collected = tarBuffer(pack);
  try {
    await fill(pack);
    pack.finalize();
  } catch (e) {
    pack.destroy(e as Error);
    await collected.catch(() => undefined);
    throw e;
  }
  return collected;
}

/**
 * An archive of in-memory files. `dirs` are folder entries to put first: the Docker engine would
 * create missing parents as root, and listing them makes them the archive owner's. List only
 * missing ones, since extracting a folder entry resets an existing folder's mode.
 */
export function packFiles(files: readonly TarFile[], o: { owner?: TarOwner; dirs?: readonly string[] } = {}): Promise<Buffer> {
  return buildTar(async (pack) => {
    for (const d of o.dirs ?? []) await tarEntry(pack, { name: d, type: 'directory', mode: 0o755, ...o.owner });
    for (const f of files)
      await tarEntry(
        pack,
        { name: f.name, type: 'file', mode: f.mode, ...o.owner },
        typeof f.content === 'string' ? Buffer.from(f.content) : f.content,
      );
  });
}
