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
function tarEntry(pack: tar.Pack, header: TarHeader, body: Buffer | string = ''): Promise<void> {
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
function packTree(root: string, entries: readonly TreeEntry[], o: PackOptions = {}): { pack: tar.Pack; done: Promise<UploadStats> } {
  const pack = tar.pack();
  const done = (async () => {
    const stats: UploadStats = { files: 0, bytes: 0 };
    for (const e of entries) {
      const header = headerOf(e, o);
      if (e.kind !== 'file') await tarEntry(pack, header);
      else if (e.size <= SMALL_FILE) await tarEntry(pack, { ...header, size: e.size }, fileBytes(root, e.rel, o.contents));
      else await streamEntry(pack, { ...header, size: e.size }, createReadStream(path.join(root, e.rel)));
      count(stats, e, e.kind === 'file' ? e.size : 0);
    }
    pack.finalize();
    return stats;
  })();
  done.catch((err: unknown) => pack.destroy(err as Error));
  return { pack, done };
}

/** An entry's header in an archive of a tree: its name under the prefix, its type, mode and owner. */
function headerOf(e: TreeEntry, o: PackOptions): MemoryTarHeader {
  const name = o.prefix ? `${o.prefix}/${e.rel}` : e.rel;
  if (e.kind === 'dir') return { name, type: 'directory', mode: e.mode, ...o.owner };
  if (e.kind === 'symlink') return { name, type: 'symlink', linkname: e.target, mode: 0o777, ...o.owner };
  return { name, type: 'file', mode: e.mode, ...o.owner };
}

/** What an upload reports: files and symlinks, and the files' bytes. */
function count(stats: UploadStats, e: TreeEntry, bytes: number): void {
  if (e.kind === 'dir') return;
  stats.files++;
  stats.bytes += bytes;
}

/** The whole archive in memory, for transports that send one body. Rejects with the packing error. */
async function tarBuffer(pack: tar.Pack): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of pack) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

/** A file for an archive of in-memory files. */
export interface TarFile {
  /** Relative to the folder the archive is extracted in. */
  name: string;
  content: Buffer | string;
  mode: number;
}

/** What an in-memory archive's entry says (TarWriter): tar-stream's header, for the types redgreen writes. */
export interface MemoryTarHeader {
  name: string;
  type: 'file' | 'directory' | 'symlink';
  mode: number;
  linkname?: string;
  uid?: number;
  gid?: number;
  uname?: string;
  gname?: string;
}

const ZEROS = '0000000000000000000';
const SEVENS = '7777777777777777777';
const TYPEFLAG = { file: 0, symlink: 2, directory: 5, 'pax-header': 72 } as const;

/** tar's octal field: `n` digits and a space (all sevens when it does not fit). */
function octal(value: number, n: number): string {
  const s = value.toString(8);
  return s.length > n ? `${SEVENS.slice(0, n)} ` : `${ZEROS.slice(0, n - s.length)}${s} `;
}

/**
 * One USTAR header block, as tar-stream encodes it, or null when the name (non-ASCII, or too long
 * to split into a prefix and a name) or the link target does not fit: a pax record carries those.
 */
function ustarHeader(
  h: Required<Pick<MemoryTarHeader, 'name' | 'mode' | 'uid' | 'gid'>> & {
    type: keyof typeof TYPEFLAG;
    size: number;
    mtime: number;
    linkname?: string | undefined;
    uname?: string | undefined;
    gname?: string | undefined;
  },
): Buffer | null {
  // A folder's name goes without a trailing slash, as tar-stream writes it (its check for one never matches).
  let name = h.name;
  if (Buffer.byteLength(name) !== name.length) return null;
  let prefix = '';
  while (name.length > 100) {
    const i = name.indexOf('/');
    if (i === -1) return null;
    prefix += prefix ? `/${name.slice(0, i)}` : name.slice(0, i);
    name = name.slice(i + 1);
  }
  if (prefix.length > 155 || (h.linkname && Buffer.byteLength(h.linkname) > 100)) return null;
  const block = Buffer.alloc(512);
  block.write(name, 0);
  block.write(octal(h.mode & 0o7777, 6), 100);
  block.write(octal(h.uid, 6), 108);
  block.write(octal(h.gid, 6), 116);
  if (h.size.toString(8).length > 11) {
    // Past 8 GiB: base-256, as tar-stream (and GNU tar) write it.
    block[124] = 0x80;
    for (let i = 11, n = h.size; i > 0; i--, n = Math.floor(n / 0x100)) block[124 + i] = n & 0xff;
  } else block.write(octal(h.size, 11), 124);
  block.write(octal(Math.floor(h.mtime / 1000), 11), 136);
  block[156] = 48 + TYPEFLAG[h.type];
  if (h.linkname) block.write(h.linkname, 157);
  block.write('ustar\u000000', 257, 'latin1');
  if (h.uname) block.write(h.uname, 265);
  if (h.gname) block.write(h.gname, 297);
  block.write(octal(0, 6), 329);
  block.write(octal(0, 6), 337);
  if (prefix) block.write(prefix, 345);
  let sum = 8 * 32;
  for (let i = 0; i < 148; i++) sum += block[i]!;
  for (let i = 156; i < 512; i++) sum += block[i]!;
  block.write(octal(sum, 6), 148);
  return block;
}

/** A pax record: its own length first, in decimal, counting the digits themselves. */
function paxRecord(key: string, value: string): string {
  const body = ` ${key}=${value}\n`;
  const len = Buffer.byteLength(body);
  let digits = String(len).length;
  if (len + digits >= 10 ** digits) digits++;
  return `${len + digits}${body}`;
}

/**
 * An archive built in memory, synchronously, byte for byte as tar-stream's pack writes it (USTAR
 * headers, a pax header for a name or link that does not fit, blocks of 512, two empty blocks at
 * the end), without its streams: for the small archives of a fixture's upload or a patch's files,
 * where tar-stream's streams cost more than the bytes.
 */
export class TarWriter {
  private readonly blocks: Buffer[] = [];

  /** `mtime`: every entry's, in ms (tar keeps seconds). */
  constructor(private readonly mtime = Date.now()) {}

  add(header: MemoryTarHeader, body?: Buffer): void {
    const size = header.type === 'file' ? (body?.length ?? 0) : 0;
    // tar-stream's defaults: a mode of 0 is taken for none.
    const mode = header.mode || (header.type === 'directory' ? 0o755 : 0o644);
    const h = { ...header, mode, uid: header.uid ?? 0, gid: header.gid ?? 0, size, mtime: this.mtime };
    const block = ustarHeader(h);
    if (block) this.blocks.push(block);
    else {
      const pax = Buffer.from(paxRecord('path', h.name) + (h.linkname ? paxRecord('linkpath', h.linkname) : ''));
      const named = { ...h, name: 'PaxHeader', linkname: h.linkname && 'PaxHeader' };
      this.blocks.push(ustarHeader({ ...named, type: 'pax-header', size: pax.length })!, pax);
      this.pad(pax.length);
      this.blocks.push(ustarHeader(named)!);
    }
    if (size) {
      this.blocks.push(body!);
      this.pad(size);
    }
  }

  /** The archive, its end included. */
  finish(): Buffer {
    this.blocks.push(Buffer.alloc(1024));
    return Buffer.concat(this.blocks);
  }

  private pad(size: number): void {
    if (size % 512) this.blocks.push(Buffer.alloc(512 - (size % 512)));
  }
}

/** Tar's room for one entry of a tree: a header block and the body in blocks; a long or non-ASCII name adds a pax header. */
function entryBytes(e: TreeEntry): number {
  const pax = e.rel.length > 90 || /[^\x20-\x7e]/.test(e.rel) ? 1024 : 0;
  return 512 + pax + (e.kind === 'file' ? Math.ceil(e.size / 512) * 512 : 0);
}

/**
 * A tree's archive for an upload: made at once in memory by TarWriter when it is at most
 * `smallBytes`, read with synchronous calls at a fraction of the CPU of streams (a fixture's tree
 * is most often this small, and this is harness CPU paid per sandbox); else packTree's stream, so
 * the event loop keeps running between its files. `stop` releases a streamed archive's files when
 * the upload failed before reading it all.
 */
export function packUpload(
  root: string,
  entries: readonly TreeEntry[],
  smallBytes: number,
  o: PackOptions = {},
): { archive: Buffer | tar.Pack; done: Promise<UploadStats>; stop: () => void } {
  if (entries.reduce((n, e) => n + entryBytes(e), 1024) > smallBytes) {
    const { pack, done } = packTree(root, entries, o);
    return { archive: pack, done, stop: () => pack.destroy() };
  }
  const writer = new TarWriter();
  const stats: UploadStats = { files: 0, bytes: 0 };
  for (const e of entries) {
    const body = e.kind === 'file' ? fileBytes(root, e.rel, o.contents) : undefined;
    writer.add(headerOf(e, o), body);
    count(stats, e, body?.length ?? 0);
  }
  return { archive: writer.finish(), done: Promise.resolve(stats), stop: () => undefined };
}

/** packUpload's archive as one buffer, for transports that send one body. */
export async function uploadBuffer(u: ReturnType<typeof packUpload>): Promise<{ archive: Buffer; stats: UploadStats }> {
  const [archive, stats] = await Promise.all([Buffer.isBuffer(u.archive) ? u.archive : tarBuffer(u.archive), u.done]);
  return { archive, stats };
}

/**
 * An archive of in-memory files. `dirs` are folder entries to put first: the Docker engine would
 * create missing parents as root, and listing them makes them the archive owner's. List only
 * missing ones, since extracting a folder entry resets an existing folder's mode.
 */
export async function packFiles(files: readonly TarFile[], o: { owner?: TarOwner; dirs?: readonly string[] } = {}): Promise<Buffer> {
  const tar = new TarWriter();
  for (const d of o.dirs ?? []) tar.add({ name: d, type: 'directory', mode: 0o755, ...o.owner });
  for (const f of files)
    tar.add({ name: f.name, type: 'file', mode: f.mode, ...o.owner }, typeof f.content === 'string' ? Buffer.from(f.content) : f.content);
  return tar.finish();
}
