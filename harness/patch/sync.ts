import { createHash } from 'node:crypto';
import { lstat, readFile } from 'node:fs/promises';
import path from 'node:path';
import type { FileToWrite, Sandbox } from '../sandbox/core/types.js';
import { touchedPaths, type ParsedPatch } from './parse.js';

export interface SyncResult {
  written: { path: string; bytes: number; sha256: string }[];
  removed: string[];
  /** Protected paths the patch changed: reported as tampering, never written. */
  tampered: string[];
}

/**
 * Writes what a patch changed in the staging tree into the sandbox. Protected paths are left as
 * the fixture has them, so a patch cannot weaken or forge the tests.
 */
export async function syncPatch(
  sandbox: Sandbox,
  stagingDir: string,
  patch: ParsedPatch,
  isProtected: (p: string) => boolean,
): Promise<SyncResult> {
  const result: SyncResult = { written: [], removed: [], tampered: [] };
  const writes: FileToWrite[] = [];
  for (const rel of touchedPaths(patch).sort()) {
    if (isProtected(rel)) {
      result.tampered.push(rel);
      continue;
    }
    const abs = path.join(stagingDir, rel);
    const st = await lstat(abs).catch(() => null);
    if (!st) {
      result.removed.push(rel);
    } else if (st.isFile()) {
      const content = await readFile(abs);
      writes.push({ path: rel, content, mode: st.mode & 0o777 });
      result.written.push({ path: rel, bytes: content.length, sha256: createHash('sha256').update(content).digest('hex') });
    }
  }
  if (result.removed.length) await sandbox.removeFiles(result.removed);
  if (writes.length) await sandbox.writeFiles(writes);
  return result;
}
