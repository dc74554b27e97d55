import { createReadStream } from 'node:fs';
import path from 'node:path';
import tar from 'tar-stream';
import { SANDBOX_GID, SANDBOX_UID } from './config.js';
import type { TreeEntry } from '../core/tree.js';
import type { UploadStats } from '../core/types.js';

/** Owned by the sandbox user: the engine extracts with the archive's owners, and commands must be able to write. */
export const OWNER = { uid: SANDBOX_UID, gid: SANDBOX_GID, uname: '', gname: '' };

export type Header = Parameters<tar.Pack['entry']>[0];

export function entry(pack: tar.Pack, header: Header, body: Buffer | string = ''): Promise<void> {
  return new Promise((resolve, reject) => {
    pack.entry({ ...OWNER, mtime: new Date(), ...header }, body, (err) => (err ? reject(err) : resolve()));
  });
}

/** Streams a body into one archive entry, with backpressure (tar-stream's sinks are streamx streams). */
export async function streamEntry(pack: tar.Pack, header: Header, body: AsyncIterable<unknown>): Promise<void> {
  let settle!: (err?: Error | null) => void;
  const written = new Promise<void>((resolve, reject) => (settle = (err) => (err ? reject(err) : resolve())));
  const sink = pack.entry({ ...OWNER, mtime: new Date(), ...header }, (err) => settle(err));
  for await (const chunk of body) {
    if (!sink.write(chunk)) await new Promise<void>((resolve) => sink.once('drain', () => resolve()));
  }
  sink.end(null);
  await written;
}

/**
 * One archive of a host tree listed by `walkTree` (so escaping symlinks were already refused),
 * streamed from disk. `pack` is the archive to send; `done` settles with the counts once every
 * file is in it, or with the first read error (the archive is then destroyed with it).
 */
export function packTree(entries: readonly TreeEntry[], hostDir: string): { pack: tar.Pack; done: Promise<UploadStats> } {
  const pack = tar.pack();
  const done = (async () => {
    let files = 0;
    let bytes = 0;
    for (const e of entries) {
      if (e.kind === 'dir') await entry(pack, { name: e.rel, type: 'directory', mode: e.mode });
      else if (e.kind === 'symlink') {
        await entry(pack, { name: e.rel, type: 'symlink', linkname: e.target, mode: 0o777 });
        files++;
      } else {
        await streamEntry(pack, { name: e.rel, type: 'file', mode: e.mode, size: e.size }, createReadStream(path.join(hostDir, e.rel)));
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

export interface ArchiveFile {
  /** Relative to the folder the archive is extracted in. */
  rel: string;
  content: Buffer | string;
  mode: number;
}

/**
 * An archive of in-memory files. `dirs` are the missing parent folders to create first: listed
 * explicitly so they belong to the sandbox user (the engine would create them as root), and only
 * the missing ones, since extracting a folder entry resets an existing folder's mode.
 */
export async function packFiles(files: readonly ArchiveFile[], dirs: readonly string[]): Promise<Buffer> {
  const pack = tar.pack();
  const chunks: Buffer[] = [];
  pack.on('data', (c) => chunks.push(c as Buffer));
  const finished = new Promise<void>((resolve, reject) => {
    pack.once('end', resolve);
    pack.once('error', reject);
  });
  for (const d of dirs) await entry(pack, { name: d, type: 'directory', mode: 0o755 });
  for (const f of files) await entry(pack, { name: f.rel, type: 'file', mode: f.mode & 0o777 }, typeof f.content === 'string' ? Buffer.from(f.content) : f.content);
  pack.finalize();
  await finished;
  return Buffer.concat(chunks);
}

/** The content of the single regular file in an archive from the engine; null when it holds something else. */
export async function readSingleFile(archive: NodeJS.ReadableStream): Promise<Buffer | null> {
  const extract = tar.extract();
  archive.on('error', (e: Error) => extract.destroy(e));
  archive.pipe(extract as unknown as NodeJS.WritableStream);
  let found: Buffer | null = null;
  try {
    for await (const e of extract) {
      const chunks: Buffer[] = [];
      for await (const c of e) chunks.push(c as Buffer);
      if (found === null && e.header.type === 'file') found = Buffer.concat(chunks);
    }
  } finally {
    release(archive);
  }
  return found;
}

/** Closes an engine response that may not have been read to its end (its connection would stay open). */
export function release(stream: NodeJS.ReadableStream): void {
  (stream as NodeJS.ReadableStream & { destroy?: () => void }).destroy?.();
}
