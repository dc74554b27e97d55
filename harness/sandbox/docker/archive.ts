import path from 'node:path';
import tar from 'tar-stream';
import { RedgreenError } from '../../errors.js';
import { SANDBOX_GID, SANDBOX_UID } from './config.js';
import { buildTar, streamEntry, tarEntry, type TarHeader, type TarOwner } from '../core/tar.js';

/**
 * What the Docker backend adds to core/tar.ts: archives it sends are owned by the sandbox user
 * (the engine extracts with the archive's owners, and commands must be able to write); archives
 * the engine sends back are read and released here. The setup cache's archives (what setup added
 * to the workspace, kept between runs) are read out of one sandbox through the engine, and
 * checked before they go into another, since what a setup produced is as untrusted as a patch.
 */
export const OWNER: TarOwner = { uid: SANDBOX_UID, gid: SANDBOX_GID, uname: '', gname: '' };

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

/** Copies one entry (header and body) from an archive being read into one being written. */
async function copyEntry(pack: tar.Pack, header: TarHeader, body: AsyncIterable<unknown> & { resume(): unknown }): Promise<void> {
  if (header.type === 'file') return streamEntry(pack, header, body);
  body.resume();
  return tarEntry(pack, header);
}

/**
 * One archive of several workspace paths, from the engine's per-path archives (whose entries are
 * named from the path's last component): entries are renamed relative to the workspace.
 */
export async function mergeArchives(parts: readonly { rel: string; open: () => Promise<NodeJS.ReadableStream> }[]): Promise<Buffer> {
  return buildTar(async (pack) => {
    // One at a time: an archive opened early would hold its connection until its turn.
    for (const { rel, open } of parts) {
      const archive = await open();
      const extract = tar.extract();
      archive.on('error', (e: Error) => extract.destroy(e));
      archive.pipe(extract as unknown as NodeJS.WritableStream);
      const dir = path.posix.dirname(rel);
      const under = (n: string) => (dir === '.' ? n : `${dir}/${n}`);
      try {
        for await (const e of extract) {
          const { name, type, linkname } = e.header;
          // A hard link names its target from the archive's root, which moves with the entries.
          await copyEntry(
            pack,
            { ...e.header, ...OWNER, name: under(name), ...(type === 'link' && linkname ? { linkname: under(linkname) } : {}) },
            e,
          );
        }
      } finally {
        release(archive);
      }
    }
  });
}

/** A relative, normalised archive path that stays inside its root, or null. */
function inside(name: string): string | null {
  const n = path.posix.normalize(name.replace(/\/+$/, ''));
  return n === '.' || n === '' || path.posix.isAbsolute(n) || n === '..' || n.startsWith('../') ? null : n;
}

/**
 * An untrusted archive (the setup cache's) checked entry by entry and repacked, owned by the
 * sandbox user: no absolute or `..` path, links only to inside the archive's root, nothing
 * written through a symlink it created. The engine's own extraction is confined to the
 * container, but without these checks it could still write into the container's read-only root.
 */
export async function checkedArchive(data: Buffer): Promise<Buffer> {
  return buildTar((pack) => checkEntries(data, pack));
}

async function checkEntries(data: Buffer, pack: tar.Pack): Promise<void> {
  const extract = tar.extract();
  extract.end(data);
  const symlinks: string[] = [];
  const refuse = (name: string, why: string): never => {
    throw new RedgreenError('SANDBOX_PATH_UNSAFE', `archive entry ${JSON.stringify(name)} ${why}`);
  };
  for await (const e of extract) {
    const { name, type, linkname } = e.header;
    const rel = inside(name) ?? refuse(name, 'is outside the workspace');
    if (symlinks.some((s) => rel.startsWith(`${s}/`))) refuse(name, 'goes through a symlink');
    if (type === 'symlink') {
      if (!linkname || path.posix.isAbsolute(linkname) || !inside(path.posix.join(path.posix.dirname(rel), linkname)))
        refuse(name, 'links outside the workspace');
      symlinks.push(rel);
    } else if (type === 'link') {
      if (!linkname || !inside(linkname)) refuse(name, 'links outside the workspace');
    } else if (type !== 'file' && type !== 'directory') {
      e.resume();
      continue; // devices and fifos are no part of a setup's result
    }
    await copyEntry(pack, { ...e.header, ...OWNER, name: rel }, e);
  }
}
