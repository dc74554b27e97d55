import tar from 'tar-stream';
import { SANDBOX_GID, SANDBOX_UID } from './config.js';
import type { TarOwner } from '../core/tar.js';

/**
 * What the Docker backend adds to core/tar.ts: archives it sends are owned by the sandbox user
 * (the engine extracts with the archive's owners, and commands must be able to write); archives
 * the engine sends back are read and released here.
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
