import { constants as fsc } from 'node:fs';
import { chmod, copyFile, lstat, mkdir, readdir, readlink, symlink } from 'node:fs/promises';
import path from 'node:path';
import { RedgreenError } from '../../errors.js';
import type { UploadStats } from './types.js';

/** Folders never uploaded: caches and installs that setup recreates. */
export const DEFAULT_EXCLUDES: readonly string[] = ['.git', 'node_modules', '__pycache__', '.pytest_cache', '.venv'];

export type TreeEntry =
  | { kind: 'dir'; rel: string; mode: number }
  | { kind: 'file'; rel: string; mode: number; size: number }
  | { kind: 'symlink'; rel: string; target: string };

/**
 * Lists a host folder without following symlinks. A symlink is kept only when it points inside
 * the folder; one that leaves it would upload host files into the sandbox, so it is refused.
 * `exclude` names top-level files or folders at any depth; `skip` takes relative paths.
 */
export async function walkTree(
  root: string,
  options: { exclude?: readonly string[]; skip?: readonly string[] } = {},
): Promise<TreeEntry[]> {
  const exclude = new Set(options.exclude ?? DEFAULT_EXCLUDES);
  const skip = new Set(options.skip ?? []);
  const out: TreeEntry[] = [];
  async function visit(dirRel: string): Promise<void> {
    const entries = await readdir(path.join(root, dirRel), { withFileTypes: true });
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const d of entries) {
      const rel = dirRel ? `${dirRel}/${d.name}` : d.name;
      if (exclude.has(d.name) || skip.has(rel)) continue;
      const abs = path.join(root, rel);
      const st = await lstat(abs);
      if (st.isSymbolicLink()) {
        const target = await readlink(abs);
        const resolved = path.resolve(path.dirname(abs), target);
        const inside = path.relative(root, resolved);
        if (path.isAbsolute(target) || inside === '' || inside.startsWith('..') || path.isAbsolute(inside)) {
          throw new RedgreenError(
            'UPLOAD_UNSAFE',
            `refusing to upload ${rel}: it is a symlink to ${target}, outside the fixture`,
            'replace it with a relative symlink inside the fixture, or with the file itself',
          );
        }
        out.push({ kind: 'symlink', rel, target });
      } else if (st.isDirectory()) {
        out.push({ kind: 'dir', rel, mode: st.mode & 0o777 });
        await visit(rel);
      } else if (st.isFile()) {
        out.push({ kind: 'file', rel, mode: st.mode & 0o777, size: st.size });
      }
      // Sockets, FIFOs and devices are not part of a repository: skipped.
    }
  }
  await visit('');
  return out;
}

/** Copies listed entries from `src` to `dest` (folders first, then files in parallel). */
export async function copyTree(entries: readonly TreeEntry[], src: string, dest: string): Promise<UploadStats> {
  let bytes = 0;
  let files = 0;
  await mkdir(dest, { recursive: true });
  for (const e of entries) if (e.kind === 'dir') await mkdir(path.join(dest, e.rel), { recursive: true });
  await Promise.all(
    entries.map(async (e) => {
      const to = path.join(dest, e.rel);
      if (e.kind === 'file') {
        await copyFile(path.join(src, e.rel), to, fsc.COPYFILE_FICLONE);
        await chmod(to, e.mode);
        bytes += e.size;
        files++;
      } else if (e.kind === 'symlink') {
        await symlink(e.target, to);
        files++;
      }
    }),
  );
  return { files, bytes };
}
