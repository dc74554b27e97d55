import { lstatSync, type Stats } from 'node:fs';
import path from 'node:path';
import { RedgreenError } from '../../errors.js';

/** Where a path inside a sandbox's roots is (findInside): its own lstat when it exists, and whether its folder does. */
export interface FoundInside {
  path: string;
  stat: Stats | undefined;
  folderExists: boolean;
}

/**
 * Resolves `p` (relative to `root`, or absolute) to a path inside one of `roots`, refusing
 * traversal and any symlink among the existing components: a write through a symlink could land
 * anywhere on the host. (A few lstat calls: synchronous, cheaper than a promise each.)
 */
export async function resolveInside(roots: readonly string[], p: string, base: string): Promise<string> {
  return findInside(roots, p, base).path;
}

/** resolveInside, with what its lstat calls found on the way (a writer then asks nothing again). */
export function findInside(roots: readonly string[], p: string, base: string): FoundInside {
  const abs = path.resolve(base, p);
  const root = roots.find((r) => abs === r || abs.startsWith(r + path.sep));
  if (!root || abs === root) {
    throw new RedgreenError('SANDBOX_PATH_UNSAFE', `path ${JSON.stringify(p)} is outside the sandbox workspace`);
  }
  const parts = path.relative(root, abs).split(path.sep);
  let cur = root;
  for (let i = 0; i < parts.length; i++) {
    cur = path.join(cur, parts[i]!);
    const st = lstatSync(cur, { throwIfNoEntry: false });
    // The root is not looked at: a component missing right under it says nothing of the root.
    if (!st) return { path: abs, stat: undefined, folderExists: i === parts.length - 1 && i > 0 };
    if (st.isSymbolicLink()) {
      throw new RedgreenError('SANDBOX_PATH_UNSAFE', `path ${JSON.stringify(p)} goes through a symlink (${path.relative(root, cur)})`);
    }
    if (i === parts.length - 1) return { path: abs, stat: st, folderExists: true };
  }
  return { path: abs, stat: undefined, folderExists: false };
}
