import { createReadStream } from 'node:fs';
import { chmod, mkdir, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import tar from 'tar-stream';
import { RedgreenError } from '../../errors.js';
import { resolveInside } from './paths.js';
import type { TreeEntry } from './tree.js';

/** Packs tree entries of `root` into a tar (folders, files with their modes, inner symlinks). */
export async function packTree(root: string, entries: readonly TreeEntry[]): Promise<Buffer> {
  const pack = tar.pack();
  const chunks: Buffer[] = [];
  const collected = (async () => {
    for await (const c of pack) chunks.push(c as Buffer);
  })();
  for (const e of entries) {
    if (e.kind === 'dir') pack.entry({ name: e.rel, type: 'directory', mode: e.mode });
    else if (e.kind === 'symlink') pack.entry({ name: e.rel, type: 'symlink', linkname: e.target });
    else {
      const entry = pack.entry({ name: e.rel, type: 'file', mode: e.mode, size: e.size });
      await pipeline(createReadStream(path.join(root, e.rel)), entry);
    }
  }
  pack.finalize();
  await collected;
  return Buffer.concat(chunks);
}

/**
 * Unpacks a tar into `root`. Every entry must land inside it, not through a symlink, and a
 * symlink may only point inside it: an archive is as untrusted as a patch.
 */
export async function unpackTar(root: string, data: Buffer): Promise<void> {
  const extract = tar.extract();
  const done = (async () => {
    for await (const entry of extract) {
      const { name, type, mode, linkname } = entry.header;
      const dest = await resolveInside([root], name.replace(/\/$/, ''), root);
      if (type === 'directory') await mkdir(dest, { recursive: true, mode: mode ?? 0o755 });
      else if (type === 'symlink' && linkname) {
        const target = path.resolve(path.dirname(dest), linkname);
        if (path.isAbsolute(linkname) || !target.startsWith(`${root}/`)) {
          throw new RedgreenError('SANDBOX_PATH_UNSAFE', `archive entry ${JSON.stringify(name)} links outside the workspace`);
        }
        await mkdir(path.dirname(dest), { recursive: true });
        await symlink(linkname, dest);
      } else if (type === 'file') {
        await mkdir(path.dirname(dest), { recursive: true });
        const parts: Buffer[] = [];
        for await (const c of entry) parts.push(c as Buffer);
        await writeFile(dest, Buffer.concat(parts));
        await chmod(dest, mode ?? 0o644);
        continue;
      }
      entry.resume();
    }
  })();
  const feed = pipeline(Readable.from([data]), extract);
  // The entry loop's own error (an unsafe entry) explains a failed feed better than "premature close".
  const [consumed, fed] = await Promise.allSettled([done, feed]);
  if (consumed.status === 'rejected') throw consumed.reason;
  if (fed.status === 'rejected') throw fed.reason;
}
