import path from 'node:path';
import { RedgreenError } from '../../errors.js';
import type { ExecResult } from '../core/types.js';

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

export interface PathCheck {
  /** Parent folders that do not exist yet, shallowest first, relative to the root: a writer creates them. */
  missing: string[];
  /** The path itself. */
  final: PathStat;
}

/** Extracts the tar archive on stdin at / as the sandbox user, modes as in the archive (the Python server reads it itself). */
export const EXTRACT_ARGV = ['tar', '-x', '-p', '-f', '-', '-C', '/'];

/**
 * Checks paths in the container, as the sandbox user, then acts on them unless one is unsafe:
 * `sh -c PATHS_SCRIPT sh <action> <count> <component>… <count> <component>…`, each path given as
 * the absolute paths of its components below its root. One letter per component goes to stderr
 * first: L symlink, D folder, F anything else, N missing, U unknown (missing to a user who cannot
 * search the folder above). A symlink or unknown anywhere, a non-folder on the way, or a folder
 * at the end of a path to write stop it with exit 3 (readKinds says which and why); else the action runs: check
 * (nothing), write (extracts the tar archive on stdin at /, as the sandbox user: modes as in the
 * archive, missing folders made), read (the single path, to stdout; exit 4 if it is not a regular
 * file: a fifo would never end), remove. Shell builtins but for the action: one short command, whatever the number of paths.
 */
export const PATHS_SCRIPT = `action=$1; shift
bad= n=0 i=0 missing=
for a; do
  if [ $i -eq $n ]; then n=$a i=0 missing=; continue; fi
  i=$((i+1))
  if [ -L "$a" ]; then k=L; elif [ -d "$a" ]; then k=D; elif [ -e "$a" ]; then k=F; elif [ -x "\${a%/*}" ]; then k=N; else k=U; fi
  echo "$k" >&2
  [ -z "$missing" ] || continue
  case $k in N) missing=1 ;; L|U) bad=1 ;; F) [ $i -eq $n ] || bad=1 ;; D) [ $i -lt $n ] || [ "$action" != write ] || bad=1 ;; esac
done
[ -z "$bad" ] || exit 3
case $action in
  write) exec ${EXTRACT_ARGV.join(' ')} ;;
  read) [ -f "$a" ] && [ ! -L "$a" ] || exit 4; exec cat -- "$a" ;;
  remove) n=0 i=0
    for a; do
      if [ $i -eq $n ]; then n=$a i=0; continue; fi
      i=$((i+1)); [ $i -lt $n ] || rm -rf -- "$a" || exit 1
    done ;;
esac`;

export type PathAction = 'check' | 'write' | 'read' | 'remove';

function prefixesOf(t: InsidePath): string[] {
  return t.rel.split('/').map((_, i, parts) => parts.slice(0, i + 1).join('/'));
}

/** The argv running PATHS_SCRIPT's `action` on these paths. */
export function pathsArgv(action: PathAction, targets: readonly InsidePath[]): string[] {
  const args = targets.flatMap((t) => {
    const prefixes = prefixesOf(t);
    return [String(prefixes.length), ...prefixes.map((rel) => posix.join(t.root, rel))];
  });
  return ['/bin/sh', '-c', PATHS_SCRIPT, 'sh', action, ...args];
}

/**
 * What PATHS_SCRIPT found (its first stderr lines): each path's missing parents and final
 * component, or the error of the first unsafe one, worded as the local backend's. Returns the
 * rest of stderr (what the action said).
 */
export function readKinds(
  stderr: string,
  targets: readonly InsidePath[],
  originals: readonly string[],
): { checks: PathCheck[]; rest: string } {
  const lines = stderr.split('\n');
  const count = targets.reduce((n, t) => n + prefixesOf(t).length, 0);
  if (lines.length <= count || lines.slice(0, count).some((k) => !/^[LDFNU]$/.test(k)))
    throw new RedgreenError('SANDBOX_FAILED', `cannot check paths in the sandbox: ${stderr.trim() || 'no answer'}`);
  let k = 0;
  const checks = targets.map((t, n) => {
    const prefixes = prefixesOf(t);
    const original = JSON.stringify(originals[n]);
    const missing: string[] = [];
    let final: PathStat = { exists: false, dir: false, symlink: false };
    for (const [i, rel] of prefixes.entries()) {
      const kind = lines[k++];
      const last = i === prefixes.length - 1;
      // Below a missing folder everything is missing, whatever the shell could tell.
      if (missing.length || kind === 'N') {
        if (!last) missing.push(rel);
        continue;
      }
      if (kind === 'L') throw new RedgreenError('SANDBOX_PATH_UNSAFE', `path ${original} goes through a symlink (${rel})`);
      if (kind === 'U')
        throw new RedgreenError('SANDBOX_PATH_UNSAFE', `path ${original} cannot be checked: a folder above ${rel} is not searchable`);
      if (!last && kind !== 'D') throw fsError('ENOTDIR', `path ${original} goes through ${rel}, which is not a folder`);
      if (last) final = { exists: true, dir: kind === 'D', symlink: false };
    }
    return { missing, final };
  });
  return { checks, rest: lines.slice(count).join('\n') };
}

/** Runs a short internal command in the sandbox's container. */
export type RunInside = (argv: string[]) => Promise<ExecResult>;

/**
 * Refuses paths with a symlink among their components below their root (the final one included),
 * checked inside the container, every component of every path in one command. A component that
 * cannot be checked (below a folder the sandbox user may not search) is refused too.
 */
export async function checkPaths(run: RunInside, targets: readonly InsidePath[], originals: readonly string[]): Promise<PathCheck[]> {
  const r = await run(pathsArgv('check', targets));
  const { checks } = readKinds(r.stderr, targets, originals);
  if (r.exitCode !== 0) throw new RedgreenError('SANDBOX_FAILED', `cannot check paths in the sandbox: exit ${r.exitCode}`);
  return checks;
}

/** An error shaped like the one Node's fs gives the local backend for the same case. */
export function fsError(code: 'ENOENT' | 'ENOTDIR' | 'EISDIR', message: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`${code}: ${message}`), { code });
}
