import { lstat, mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { writeOwner } from '../sandbox/host/owner-file.js';
import { copyTree, type TreeEntry } from '../sandbox/core/tree.js';
import { applyExactly, type PatchedFile } from './exact.js';
import { touchedPaths, type ParsedPatch } from './parse.js';

export type { PatchedFile } from './exact.js';
export type ApplyStatus = 'applied' | 'already_applied' | 'failed';

export interface ApplyOutcome {
  status: ApplyStatus;
  /** Applied only by the fuzzy fallback. */
  fuzzy?: boolean;
  /** git's own words when it refused the patch. */
  reason?: string;
  /** When applied: every path the patch touches, as it leaves it (null: deleted). */
  files?: Map<string, PatchedFile>;
}

/**
 * Applies a patch to the fixture's files as `git apply` does, without changing the fixture:
 * in memory when every hunk is exactly where it says (what git would do too), else with git on
 * a copy of what the patch touches. Applying on the host rather than inside the sandbox works the
 * same on every backend; only the files the patch touched are then written into the sandbox.
 */
export async function applyToFixture(
  fixtureDir: string,
  skip: readonly string[],
  patchText: string,
  parsed: ParsedPatch,
  /** `contents`: files' bytes as already read from `fixtureDir` (applyExactly). */
  options: { fuzzy?: boolean; contents?: ReadonlyMap<string, Buffer> } = {},
): Promise<ApplyOutcome> {
  const exact = applyExactly(patchText, parsed, fixtureDir, skip, options.contents);
  if (exact) return { status: 'applied', files: exact };
  const staging = await Staging.create(fixtureDir, skip, parsed);
  try {
    const outcome = await staging.apply(patchText, parsed, options);
    return outcome.status === 'applied' ? { ...outcome, files: await staging.read(touchedPaths(parsed)) } : outcome;
  } finally {
    await staging.dispose();
  }
}

/**
 * A host-side copy of what a patch touches, where git applies it: git apply reads nothing but
 * the files a patch names, so those (and any file standing where the patch needs a folder) are
 * all the copy holds.
 */
export class Staging {
  private constructor(
    readonly dir: string,
    private readonly root: string,
  ) {}

  static async create(fixtureDir: string, skip: readonly string[], patch: ParsedPatch): Promise<Staging> {
    const root = await mkdtemp(path.join(os.tmpdir(), 'redgreen-staging-'));
    const dir = path.join(root, 'tree');
    try {
      writeOwner(root, path.basename(root), 'staging');
      await copyTree(await patchEntries(fixtureDir, touchedPaths(patch), skip), fixtureDir, dir);
      return new Staging(dir, root);
    } catch (e) {
      await rm(root, { recursive: true, force: true });
      throw e;
    }
  }

  /**
   * `git apply`, exactly (it applies all of a patch or nothing). With `fuzzy`, a patch git
   * refuses is tried once more with whitespace ignored and one line of context (like `patch
   * --fuzz`), and the outcome says so.
   */
  async apply(patchText: string, parsed: ParsedPatch, options: { fuzzy?: boolean } = {}): Promise<ApplyOutcome> {
    const exact = [`-p${parsed.strip}`, '--whitespace=nowarn'];
    const reason = await this.git(patchText, exact);
    if (reason === null) return { status: 'applied' };
    if ((await this.git(patchText, [...exact, '--reverse', '--check'])) === null)
      return { status: 'already_applied', reason: 'the patch is already applied' };
    if (options.fuzzy && (await this.git(patchText, [...exact, '--ignore-whitespace', '--recount', '-C1'])) === null) {
      return { status: 'applied', fuzzy: true, reason: 'applied by the fuzzy fallback (whitespace ignored, 1 line of context)' };
    }
    return { status: 'failed', reason };
  }

  /** `git apply <options>` on the patch (stdin) in the copy: null when it succeeded, else git's reason. */
  private async git(patchText: string, options: string[]): Promise<string | null> {
    // Loaded by the few patches git applies: child_process is heavy to load for `validate`.
    const { runTool } = await import('../sandbox/core/tool.js');
    const r = await runTool('git', ['-c', 'core.autocrlf=false', 'apply', ...options, '-'], {
      cwd: this.dir,
      input: patchText,
      env: {
        PATH: process.env.PATH ?? '/usr/bin:/bin',
        HOME: this.root,
        GIT_CONFIG_NOSYSTEM: '1',
        // Never a repository above the copy: git apply works on plain files, paths from here.
        GIT_CEILING_DIRECTORIES: this.root,
        LANG: 'C',
      },
    });
    if (r.code === 0) return null;
    return gitReason(r.error ? `git could not run: ${r.error}` : r.stderr || r.stdout || `git apply exited ${r.code}`);
  }

  /** The copy's files at these paths after git (null: not there; folders and links are not a patch's result). */
  async read(paths: readonly string[]): Promise<Map<string, PatchedFile>> {
    const files = new Map<string, PatchedFile>();
    for (const rel of paths) {
      const abs = path.join(this.dir, rel);
      const st = await lstat(abs).catch(() => null);
      if (!st) files.set(rel, null);
      else if (st.isFile()) files.set(rel, { content: await readFile(abs), mode: st.mode & 0o777 });
    }
    return files;
  }

  async dispose(): Promise<void> {
    await rm(this.root, { recursive: true, force: true });
  }
}

/**
 * What the copy needs of the fixture for these paths: each path as it is there (a file, or a
 * folder where the patch expects a file), the folders above it, and a file standing where the
 * patch needs a folder (so git refuses it as it would in the whole tree). `skip` is never copied.
 */
async function patchEntries(root: string, paths: readonly string[], skip: readonly string[]): Promise<TreeEntry[]> {
  const entries = new Map<string, TreeEntry>();
  for (const p of paths) {
    if (skip.includes(p)) continue;
    const parts = p.split('/');
    for (let i = 1; i <= parts.length; i++) {
      const rel = parts.slice(0, i).join('/');
      if (skip.includes(rel)) break;
      const st = await lstat(path.join(root, rel)).catch(() => null);
      if (!st) break;
      if (st.isDirectory()) entries.set(rel, { kind: 'dir', rel, mode: st.mode & 0o777 });
      else if (st.isFile()) entries.set(rel, { kind: 'file', rel, mode: st.mode & 0o777, size: st.size });
      // A symlink on the way is refused by the guard before any staging; nothing else is a repository's.
      if (!st.isDirectory()) break;
    }
  }
  return [...entries.values()].sort((a, b) => (a.rel < b.rel ? -1 : a.rel > b.rel ? 1 : 0));
}

function gitReason(msg: string): string {
  return msg
    .trim()
    .split('\n')
    .filter((l) => l && !/^(Checking patch|Applied patch|Applying patch)/.test(l))
    .slice(0, 12)
    .join('\n');
}
