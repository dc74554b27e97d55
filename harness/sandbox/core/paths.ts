import { lstatSync } from 'node:fs';
import path from 'node:path';
import { RedgreenError } from '../../errors.js';

/**
 * Resolves `p` (relative to `root`, or absolute) to a path inside one of `roots`, refusing
 * traversal and any symlink among the existing components: a write through a symlink could land
 * anywhere on the host. (A few lstat calls: synchronous, cheaper than a promise each.)
 */
export async function resolveInside(roots: readonly string[], p: string, base: string): Promise<string> {
  const abs = path.resolve(base, p);
  const root = roots.find((r) => abs === r || abs.startsWith(r + path.sep));
  if (!root || abs === root) {
    throw new RedgreenError('SANDBOX_PATH_UNSAFE', `path ${JSON.stringify(p)} is outside the sandbox workspace`);
  }
  let cur = root;
  for (const part of path.relative(root, abs).split(path.sep)) {
    cur = path.join(cur, part);
    const st = lstatSync(cur, { throwIfNoEntry: false });
    if (!st) break;
    if (st.isSymbolicLink()) {
      throw new RedgreenError('SANDBOX_PATH_UNSAFE', `path ${JSON.stringify(p)} goes through a symlink (${path.relative(root, cur)})`);
    }
  }
  return abs;
}
