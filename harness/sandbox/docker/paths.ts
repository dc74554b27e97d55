import path from 'node:path';
import type Docker from 'dockerode';
import { RedgreenError } from '../../errors.js';
import { engineFailure, statusOf } from './client.js';

const posix = path.posix;

export interface InsidePath {
  /** The absolute path inside the container. */
  abs: string;
  /** Which allowed root it is under (workspace or scratch). */
  root: string;
  /** Relative to that root, never empty. */
  rel: string;
}

/**
 * Resolves `p` (relative to `base`, or absolute) lexically against the container's roots, like
 * the local backend's resolveInside: traversal out of the workspace and scratch is refused.
 */
export function insideRoots(roots: readonly string[], p: string, base: string): InsidePath {
  const abs = posix.resolve(base, p);
  const root = roots.find((r) => abs === r || abs.startsWith(`${r}/`));
  if (!root || abs === root) {
    throw new RedgreenError('SANDBOX_PATH_UNSAFE', `path ${JSON.stringify(p)} is outside the sandbox workspace`);
  }
  return { abs, root, rel: posix.relative(root, abs) };
}

export interface PathStat {
  exists: boolean;
  dir: boolean;
  symlink: boolean;
}

// Go's os.FileMode bits, as the engine reports them in X-Docker-Container-Path-Stat.
const GO_MODE_DIR = 2 ** 31;
const GO_MODE_SYMLINK = 2 ** 27;

/** lstat inside the container through the archive API (HEAD): no process started. */
async function statInContainer(container: Docker.Container, abs: string): Promise<PathStat> {
  try {
    const res = (await container.infoArchive({ path: abs })) as NodeJS.ReadableStream & { headers: Record<string, string | undefined> };
    // The answer is all in a header; an unread response would hold its connection (and the process) open.
    res.resume();
    const raw = res.headers['x-docker-container-path-stat'];
    const stat = JSON.parse(Buffer.from(raw ?? '', 'base64').toString('utf8')) as { mode: number; linkTarget?: string };
    // Podman reports every path's own name as its linkTarget; only another name means a link.
    const symlink = Math.floor(stat.mode / GO_MODE_SYMLINK) % 2 === 1 || Boolean(stat.linkTarget && stat.linkTarget !== abs);
    return { exists: true, dir: Math.floor(stat.mode / GO_MODE_DIR) % 2 === 1, symlink };
  } catch (e) {
    if (statusOf(e) === 404) return { exists: false, dir: false, symlink: false };
    throw engineFailure(`stat ${abs}`, e);
  }
}

export interface PathCheck {
  /** Parent folders that do not exist yet, shallowest first, relative to the root: a writer creates them. */
  missing: string[];
  /** The path itself. */
  final: PathStat;
}

/**
 * Refuses a path with a symlink among its components below its root (the final one included),
 * checked inside the container through the archive API, all components at once.
 */
export async function assertNoSymlink(
  container: Docker.Container,
  target: InsidePath,
  original: string,
  /** For an engine whose stat follows links (Podman): which of these absent paths are dangling links. */
  danglingLinks?: (abs: string[]) => Promise<string[]>,
): Promise<PathCheck> {
  const parts = target.rel.split('/');
  const prefixes = parts.map((_, i) => parts.slice(0, i + 1).join('/'));
  const stats = await Promise.all(prefixes.map((rel) => statInContainer(container, posix.join(target.root, rel))));
  const absent = prefixes.filter((_, i) => !stats[i]!.exists);
  if (danglingLinks && absent.length) {
    const links = new Set(await danglingLinks(absent.map((rel) => posix.join(target.root, rel))));
    prefixes.forEach((rel, i) => links.has(posix.join(target.root, rel)) && (stats[i] = { exists: true, dir: false, symlink: true }));
  }
  const missing: string[] = [];
  for (const [i, st] of stats.entries()) {
    if (st.symlink) {
      throw new RedgreenError('SANDBOX_PATH_UNSAFE', `path ${JSON.stringify(original)} goes through a symlink (${prefixes[i]})`);
    }
    if (!st.exists && i < prefixes.length - 1) missing.push(prefixes[i]!);
    if (st.exists && !st.dir && i < prefixes.length - 1) {
      throw fsError('ENOTDIR', `path ${JSON.stringify(original)} goes through ${prefixes[i]}, which is not a folder`);
    }
  }
  return { missing, final: stats[stats.length - 1]! };
}

/** An error shaped like the one Node's fs gives the local backend for the same case. */
export function fsError(code: 'ENOENT' | 'ENOTDIR' | 'EISDIR', message: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`${code}: ${message}`), { code });
}
