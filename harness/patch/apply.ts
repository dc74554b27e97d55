import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { simpleGit, type SimpleGit } from 'simple-git';
import { writeOwner } from '../sandbox/host/gc.js';
import { copyTree, walkTree } from '../sandbox/core/tree.js';
import type { ParsedPatch } from './parse.js';

export type ApplyStatus = 'applied' | 'already_applied' | 'failed';

export interface ApplyOutcome {
  status: ApplyStatus;
  /** Applied only by the fuzzy fallback. */
  fuzzy?: boolean;
  /** git's own words when it refused the patch. */
  reason?: string;
}

/**
 * A host-side copy of the fixture where patches are applied with git. Applying here rather than
 * inside the sandbox works the same on every backend; only the files the patch touched are then
 * written into the sandbox.
 */
export class Staging {
  private constructor(
    readonly dir: string,
    private readonly git: SimpleGit,
  ) {}

  static async create(fixtureDir: string, skip: readonly string[]): Promise<Staging> {
    const root = await mkdtemp(path.join(os.tmpdir(), 'redgreen-staging-'));
    const dir = path.join(root, 'tree');
    try {
      await writeOwner(root, path.basename(root), 'staging');
      await copyTree(await walkTree(fixtureDir, { skip }), fixtureDir, dir);
      // An empty repository makes git apply resolve paths from here, never from a repo above.
      const git = simpleGit({ baseDir: dir, config: ['core.autocrlf=false'] }).env({
        PATH: process.env.PATH ?? '/usr/bin:/bin',
        HOME: root,
        GIT_CONFIG_NOSYSTEM: '1',
        LANG: 'C',
      });
      await git.init();
      return new Staging(dir, git);
    } catch (e) {
      await rm(root, { recursive: true, force: true });
      throw e;
    }
  }

  /**
   * `git apply`, exactly. With `fuzzy`, a patch git refuses is tried once more with whitespace
   * ignored and one line of context (like `patch --fuzz`), and the outcome says so.
   */
  async apply(patchText: string, parsed: ParsedPatch, options: { fuzzy?: boolean } = {}): Promise<ApplyOutcome> {
    // A run checks the patch here before any sandbox exists, then syncs it after RED: the second
    // call with the same patch answers from the first (the tree already holds it).
    const key = `${options.fuzzy ? 'fuzzy' : 'exact'}\0${patchText}`;
    if (this.applied?.key !== key) this.applied = { key, outcome: this.applyOnce(patchText, parsed, options) };
    return this.applied.outcome;
  }

  private applied: { key: string; outcome: Promise<ApplyOutcome> } | null = null;

  private async applyOnce(patchText: string, parsed: ParsedPatch, options: { fuzzy?: boolean }): Promise<ApplyOutcome> {
    const file = path.join(path.dirname(this.dir), 'change.patch');
    await writeFile(file, patchText);
    // --verbose: simple-git waits 50 ms more for a command that printed nothing.
    const exact = [`-p${parsed.strip}`, '--whitespace=nowarn', '--verbose'];
    const check = (opts: string[]) => this.git.applyPatch(file, [...opts, '--check']).then(() => null, gitReason);
    const reason = await check(exact);
    if (reason === null) return this.applyWith(file, exact, false);
    if ((await check([...exact, '--reverse'])) === null) return { status: 'already_applied', reason: 'the patch is already applied' };
    if (options.fuzzy) {
      const fuzzy = [...exact, '--ignore-whitespace', '--recount', '-C1'];
      if ((await check(fuzzy)) === null) return this.applyWith(file, fuzzy, true);
    }
    return { status: 'failed', reason };
  }

  private async applyWith(file: string, opts: string[], fuzzy: boolean): Promise<ApplyOutcome> {
    try {
      await this.git.applyPatch(file, opts);
      return fuzzy
        ? { status: 'applied', fuzzy, reason: 'applied by the fuzzy fallback (whitespace ignored, 1 line of context)' }
        : { status: 'applied' };
    } catch (e) {
      return { status: 'failed', reason: gitReason(e) };
    }
  }

  async dispose(): Promise<void> {
    await rm(path.dirname(this.dir), { recursive: true, force: true });
  }
}

function gitReason(e: unknown): string {
  const msg = e instanceof Error ? e.message : String(e);
  return msg
    .trim()
    .split('\n')
    .filter((l) => l && !/^(Checking patch|Applied patch|Applying patch)/.test(l))
    .slice(0, 12)
    .join('\n');
}
