import { buildTar, packTreeBuffer, tarEntry } from '../core/tar.js';
import { fileBytes, type TreeEntry } from '../core/tree.js';
import type { UploadStats } from '../core/types.js';

/** Tar's room for one entry: a header block and the body in blocks; a long or non-ASCII name adds a pax header. */
function entryBytes(e: TreeEntry): number {
  const pax = e.rel.length > 90 || /[^\x20-\x7e]/.test(e.rel) ? 1024 : 0;
  return 512 + pax + (e.kind === 'file' ? Math.ceil(e.size / 512) * 512 : 0);
}

/**
 * The archive of a tree listed by walkTree, in memory, its members under `prefix/`. A tree whose
 * archive is at most `smallBytes` is read with synchronous calls and packed from buffers, about a
 * tenth of the CPU of streaming each file through core/tar.ts (a fixture's tree is most often
 * this small, and this is harness CPU paid per sandbox); a bigger one is streamed as before, so
 * the event loop keeps running between its files.
 */
export async function packTree(
  root: string,
  entries: readonly TreeEntry[],
  prefix: string,
  smallBytes: number,
  /** Small files' bytes already read (a ReadTree's): not read again. */
  contents?: ReadonlyMap<string, Buffer>,
): Promise<{ archive: Buffer; stats: UploadStats }> {
  if (entries.reduce((n, e) => n + entryBytes(e), 1024) > smallBytes) return packTreeBuffer(root, entries, { prefix, contents });
  const stats: UploadStats = { files: 0, bytes: 0 };
  const archive = await buildTar(async (pack) => {
    for (const e of entries) {
      const name = `${prefix}/${e.rel}`;
      if (e.kind === 'dir') await tarEntry(pack, { name, type: 'directory', mode: e.mode });
      else if (e.kind === 'symlink') await tarEntry(pack, { name, type: 'symlink', linkname: e.target, mode: 0o777 });
      else {
        const body = fileBytes(root, e.rel, contents);
        await tarEntry(pack, { name, type: 'file', mode: e.mode }, body);
        stats.bytes += body.length;
      }
      if (e.kind !== 'dir') stats.files++;
    }
  });
  return { archive, stats };
}
