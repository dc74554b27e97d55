import { chmodSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, rmdirSync, unlinkSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { UMASK } from '../core/rewrite.js';
import { breather } from '../core/tree.js';
import { SERVED_ENV_FILE } from './server-process.js';

/** The folders of a host sandbox, inside its root. */
export const SANDBOX_DIRS = ['workspace', 'scratch', 'home', 'tmp'] as const;

/** What mkdir gives a new folder: its mode is put back on a reused one. */
const DIR_MODE = 0o777 & ~UMASK;

export interface HostRootsOptions {
  /** Where roots are made (a temp folder). */
  base: string;
  /** Folder name prefix, e.g. `redgreen-local-`. */
  prefix: string;
  /** Turns a new root into a sandbox's (a size-limited mount); returns what `discard` must undo. */
  prepare?: (root: string) => Promise<boolean>;
  /** Undoes `prepare` before the root is removed. */
  unprepare?: (root: string, prepared: boolean) => Promise<void>;
}

/**
 * The folders host sandboxes live in, made once and emptied for the next sandbox instead of being
 * removed and made again. Each sandbox still gets folders that are exactly as new — empty, with a
 * new folder's mode — and nothing of the one before: its processes are gone before its folders
 * come back (destroy), and a folder that cannot be emptied completely is removed instead. What
 * this saves is the filesystem's work: five folders made and removed per fixture cost more than a
 * small fixture's own files (an ext4 without a journal, say, scans past every inode it freed
 * recently before it hands out a new one).
 */
export class HostRoots {
  private readonly free: string[] = [];
  private readonly prepared = new Map<string, boolean>();
  /** Between open and close (a run): roots come back for reuse; otherwise they are removed at once. */
  private isOpen = false;

  /** Whether a root given back now is kept for the next sandbox. */
  get reusing(): boolean {
    return this.isOpen;
  }

  constructor(private readonly o: HostRootsOptions) {}

  /** A root with its empty SANDBOX_DIRS, and whether `prepare` applied to it. */
  async take(): Promise<{ root: string; prepared: boolean }> {
    const reused = this.free.pop();
    if (reused) return { root: reused, prepared: this.prepared.get(reused)! };
    const root = mkdtempSync(path.join(this.o.base, this.o.prefix));
    let prepared = false;
    try {
      prepared = (await this.o.prepare?.(root)) ?? false;
      for (const d of SANDBOX_DIRS) mkdirSync(path.join(root, d));
    } catch (e) {
      await this.discard(root, prepared);
      throw e;
    }
    this.prepared.set(root, prepared);
    return { root, prepared };
  }

  /** From now until close, roots that come back are kept for the next sandbox. */
  open(): void {
    this.isOpen = true;
  }

  /** Takes a sandbox's root back once nothing of it runs any more: emptied for the next one, or removed. */
  async give(root: string): Promise<void> {
    // Emptying a big tree lets the event loop run: a run closed meanwhile does not keep the root.
    if (this.reusing && (await empty(root)) && this.reusing) {
      this.free.push(root);
      return;
    }
    await this.discard(root, this.prepared.get(root) ?? false);
  }

  /** Removes every root kept for reuse; later ones are removed as they come back. Never throws. */
  async close(): Promise<void> {
    this.isOpen = false;
    await Promise.all(this.free.splice(0).map((r) => this.discard(r, this.prepared.get(r) ?? false)));
  }

  private async discard(root: string, prepared: boolean): Promise<void> {
    this.prepared.delete(root);
    await this.o.unprepare?.(root, prepared).catch(() => undefined);
    await rm(root, { recursive: true, force: true, maxRetries: 3 }).catch(() => undefined);
  }
}

/**
 * Empties a root's sandbox folders (whatever a command left: hidden files, read-only folders,
 * other files beside them) and gives the folders a new folder's mode; false when it could not,
 * and the root must go. Synchronous calls, no promise each, and none that changes nothing (a
 * folder's mode already right); the event loop runs between chunks of them, so a workspace of
 * 30,000 files does not hold every other sandbox for seconds. Nothing of the sandbox runs any more
 * (destroy), so a folder emptied stays empty: it is not read again.
 */
async function empty(root: string): Promise<boolean> {
  const tick = breather();
  try {
    let emptied = 0;
    for (const name of readdirSync(root)) {
      // The owner, and the file of variables a kept bwrap server has bound (rewritten by each sandbox that needs it).
      if (name === 'owner.json' || name === SERVED_ENV_FILE) continue;
      const p = path.join(root, name);
      const st = lstatSync(p);
      if (!(SANDBOX_DIRS as readonly string[]).includes(name)) {
        if (st.isDirectory()) await removeTree(p, tick);
        else unlinkSync(p);
        continue;
      }
      // A folder a command replaced (by a symlink, say) is never followed: the root goes.
      if (!st.isDirectory()) return false;
      if ((st.mode & 0o7777) !== DIR_MODE) chmodSync(p, DIR_MODE);
      await clear(p, tick);
      emptied++;
    }
    // A folder a command removed is not made again here: the root goes.
    return emptied === SANDBOX_DIRS.length;
  } catch {
    return false;
  }
}

/** Removes what a folder holds, never following a symlink (a folder's entry says what it is, not where it points). */
async function clear(dir: string, tick: () => Promise<void>): Promise<void> {
  for (const d of readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, d.name);
    if (d.isDirectory()) await removeTree(p, tick);
    else unlinkSync(p);
    await tick();
  }
}

async function removeTree(dir: string, tick: () => Promise<void>): Promise<void> {
  await clear(dir, tick);
  rmdirSync(dir);
}
