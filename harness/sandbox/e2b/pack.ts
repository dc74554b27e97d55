import { packSmallTree, packTreeBuffer } from '../core/tar.js';
import type { TreeEntry } from '../core/tree.js';
import type { UploadStats } from '../core/types.js';

/**
 * The archive of a tree listed by walkTree, in memory, its members under `prefix/`: packed from
 * buffers when it is at most `smallBytes` (core/tar.ts packSmallTree), else streamed.
 */
export async function packTree(
  root: string,
  entries: readonly TreeEntry[],
  prefix: string,
  smallBytes: number,
  /** Small files' bytes already read (a ReadTree's): not read again. */
  contents?: ReadonlyMap<string, Buffer>,
): Promise<{ archive: Buffer; stats: UploadStats }> {
  return packSmallTree(root, entries, smallBytes, { prefix, contents }) ?? packTreeBuffer(root, entries, { prefix, contents });
}
