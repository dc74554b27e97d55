import { readFile } from 'node:fs/promises';
import path from 'node:path';
import tar from 'tar-stream';
import type { TreeEntry } from '../core/tree.js';
import type { UploadStats } from '../core/types.js';

/**
 * Tar archives for the e2b backend: a fixture goes up as one archive and is unpacked inside the
 * sandbox, so an upload costs two requests whatever the number of files. Member names are relative
 * to the sandbox's root folder (`workspace/…`, `scratch/…`), the only places the helper unpacks to.
 */
export interface ArchiveFile {
  /** Path relative to the sandbox root, e.g. `workspace/src/a.py`. */
  name: string;
  content: Buffer;
  mode: number;
}

async function collect(add: (pack: tar.Pack) => Promise<void>): Promise<Buffer> {
  const pack = tar.pack();
  const chunks: Buffer[] = [];
  const drained = (async () => {
    for await (const c of pack) chunks.push(c as Buffer);
  })();
  try {
    await add(pack);
    pack.finalize();
  } catch (e) {
    pack.destroy(e as Error);
    await drained.catch(() => undefined);
    throw e;
  }
  await drained;
  return Buffer.concat(chunks);
}

function entry(pack: tar.Pack, header: Partial<tar.Header> & { name: string }, content?: Buffer): Promise<void> {
  return new Promise((resolve, reject) => {
    pack.entry({ uid: 0, gid: 0, ...header }, content ?? Buffer.alloc(0), (err) => (err ? reject(err) : resolve()));
  });
}

/** Packs a tree listed by walkTree (which already refused symlinks that leave it) under `prefix`. */
export async function packTree(entries: readonly TreeEntry[], src: string, prefix: string): Promise<{ archive: Buffer; stats: UploadStats }> {
  let files = 0;
  let bytes = 0;
  const archive = await collect(async (pack) => {
    for (const e of entries) {
      const name = `${prefix}/${e.rel}`;
      if (e.kind === 'dir') await entry(pack, { name, type: 'directory', mode: e.mode });
      else if (e.kind === 'symlink') {
        await entry(pack, { name, type: 'symlink', linkname: e.target, mode: 0o777 });
        files++;
      } else {
        const content = await readFile(path.join(src, e.rel));
        await entry(pack, { name, type: 'file', mode: e.mode, size: content.length }, content);
        files++;
        bytes += content.length;
      }
    }
  });
  return { archive, stats: { files, bytes } };
}

export function packFiles(files: readonly ArchiveFile[]): Promise<Buffer> {
  return collect(async (pack) => {
    for (const f of files) await entry(pack, { name: f.name, type: 'file', mode: f.mode, size: f.content.length }, f.content);
  });
}
