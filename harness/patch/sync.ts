import type { FileToWrite, Sandbox } from '../sandbox/core/types.js';
import type { PatchedFile } from './exact.js';
import { sha256 } from '../sandbox/core/sha256.js';

export interface SyncResult {
  written: { path: string; bytes: number; sha256: string }[];
  removed: string[];
  /** Protected paths the patch changed: reported as tampering, never written. */
  tampered: string[];
}

/**
 * Writes what a patch changed (the files an applied patch left) into the sandbox. Protected paths
 * are left as the fixture has them, so a patch cannot weaken or forge the tests.
 */
export async function syncPatch(
  sandbox: Sandbox,
  files: ReadonlyMap<string, PatchedFile>,
  isProtected: (p: string) => boolean,
): Promise<SyncResult> {
  const result: SyncResult = { written: [], removed: [], tampered: [] };
  const writes: FileToWrite[] = [];
  for (const rel of [...files.keys()].sort()) {
    if (isProtected(rel)) {
      result.tampered.push(rel);
      continue;
    }
    const file = files.get(rel)!;
    if (file === null) {
      result.removed.push(rel);
    } else {
      writes.push({ path: rel, content: file.content, mode: file.mode });
      result.written.push({ path: rel, bytes: file.content.length, sha256: sha256(file.content) });
    }
  }
  if (result.removed.length) await sandbox.removeFiles(result.removed);
  if (writes.length) await sandbox.writeFiles(writes);
  return result;
}
