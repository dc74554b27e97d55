import { lstatSync } from 'node:fs';
import path from 'node:path';
import { RedgreenError } from '../errors.js';
import type { ParsedPatch } from './parse.js';

/** Why a path may not be touched, or null when it may. */
export function unsafePathReason(p: string): string | null {
  if (p === '') return 'an empty path';
  if (p.includes('\0')) return 'a NUL byte';
  if (path.posix.isAbsolute(p) || /^[A-Za-z]:[\\/]/.test(p) || p.startsWith('\\')) return 'an absolute path';
  const parts = p.split(/[\\/]/);
  if (parts.includes('..')) return 'a ".." component';
  if (parts.some((x) => x.toLowerCase() === '.git')) return 'a path inside .git';
  return null;
}

/**
 * Refuses a patch before anything is written: absolute paths, "..", .git, new symlinks (a
 * symlink plus a later write through it is the classic escape), and writes through a symlink
 * that already exists in the tree at `root`.
 */
export async function guardPatch(patch: ParsedPatch, root: string): Promise<void> {
  for (const f of patch.files) {
    for (const p of [f.oldPath, f.newPath]) {
      if (p === null) continue;
      const reason = unsafePathReason(p);
      if (reason) throw new RedgreenError('PATCH_UNSAFE', `the patch touches ${JSON.stringify(p)}: ${reason}`);
    }
    if (f.newMode === '120000') {
      throw new RedgreenError(
        'PATCH_UNSAFE',
        `the patch creates or changes a symlink at ${JSON.stringify(f.newPath ?? f.oldPath)}`,
        'patches may not create symlinks',
      );
    }
  }
  // Each path prefix once (a file's old and new paths are mostly one, and files share folders).
  const seen = new Set<string>();
  for (const f of patch.files) {
    for (const p of [f.oldPath, f.newPath]) {
      if (p === null) continue;
      const parts = p.split('/');
      for (let i = 1; i <= parts.length; i++) {
        const prefix = parts.slice(0, i).join('/');
        if (seen.has(prefix)) continue;
        seen.add(prefix);
        // One lstat per path prefix, at once: a promise each would cost more than the call.
        const st = lstatSync(path.join(root, prefix), { throwIfNoEntry: false });
        if (!st) break;
        if (st.isSymbolicLink()) {
          throw new RedgreenError('PATCH_UNSAFE', `the patch writes through the symlink ${JSON.stringify(prefix)} (${JSON.stringify(p)})`);
        }
      }
    }
  }
}
