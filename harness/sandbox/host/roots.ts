import { chmodSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, renameSync, rmdirSync, unlinkSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { UMASK } from '../core/rewrite.js';
import { breather, SMALL_FILE } from '../core/tree.js';
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
  /**
   * Keeps the small plain files of an emptied root as spare inodes for the next sandbox's upload
   * (Spares): for the local backend, which isolates nothing a file's inode could carry.
   */
  spareFiles?: boolean;
}

/** The folder of a root that holds its spare files (never a sandbox's: not in SANDBOX_DIRS, never bound). */
const SPARE_DIR = '.spare';
/** The most spare files a root keeps: a fixture's small files, not a big tree's. */
export const MAX_SPARES = 1024;

/**
 * A root's spare files: plain files (one link, up to SMALL_FILE) of the sandbox before, moved out
 * of its folders instead of removed, which an upload takes one at a time and rewrites whole
 * (rewrite.ts reuseSync) instead of creating a file. A file made is an inode allocated, and an
 * ext4 without a journal will not hand out an inode freed in the last minute (five, while its
 * inode table block is unwritten): it scans past each from the start of the group, so after
 * hundreds of small fixtures a second, a create costs 0.5-2 ms. A rename allocates nothing.
 */
export class Spares {
  private readonly free: string[] = [];
  private made = 0;

  constructor(private readonly dir: string) {}

  /** A spare file's path, moved out of the list (the caller renames it into place), or undefined. */
  take(): string | undefined {
    return this.free.pop();
  }

  /** Moves `file` (a plain file with one link) into the spares; false when there is no room and it must be removed. */
  keep(file: string): boolean {
    if (this.free.length >= MAX_SPARES) return false;
    if (!this.made) mkdirSync(this.dir, { recursive: true });
    const spare = path.join(this.dir, String(this.made++));
    renameSync(file, spare);
    this.free.push(spare);
    return true;
  }
}

/**
 * The folders host sandboxes live in, made once and emptied for the next sandbox instead of being
 * removed and made again. Each sandbox still gets folders that are exactly as new — empty, with a
 * new folder's mode — and nothing of the one before: its processes are gone before its folders
 * come back (destroy), and a folder that cannot be emptied completely is removed instead. What
 * this saves is the filesystem's work: five folders made and removed per fixture cost more than a
 * small fixture's own files (an ext4 without a journal, say, scans past every inode it freed
 * recently before it hands out a new one). With spareFiles (local), the small plain files of the
 * sandbox before are kept aside, out of its folders, for the next upload to rewrite whole (Spares).
 */
export class HostRoots {
  private readonly free: string[] = [];
  private readonly prepared = new Map<string, boolean>();
  private readonly spares = new Map<string, Spares>();
  /** Between open and close (a run): roots come back for reuse; otherwise they are removed at once. */
  private isOpen = false;

  /** Whether a root given back now is kept for the next sandbox. */
  get reusing(): boolean {
    return this.isOpen;
  }

  constructor(private readonly o: HostRootsOptions) {}

  /** A root with its empty SANDBOX_DIRS, whether `prepare` applied to it, and its spare files (spareFiles). */
  async take(): Promise<{ root: string; prepared: boolean; spares?: Spares }> {
    const reused = this.free.pop();
    if (reused) return { root: reused, prepared: this.prepared.get(reused)!, spares: this.spares.get(reused) };
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
    const spares = this.o.spareFiles ? new Spares(path.join(root, SPARE_DIR)) : undefined;
    if (spares) this.spares.set(root, spares);
    return { root, prepared, spares };
  }

  /** From now until close, roots that come back are kept for the next sandbox. */
  open(): void {
    this.isOpen = true;
  }

  /** Takes a sandbox's root back once nothing of it runs any more: emptied for the next one, or removed. */
  async give(root: string): Promise<void> {
    // Emptying a big tree lets the event loop run: a run closed meanwhile does not keep the root.
    if (this.reusing && (await empty(root, this.spares.get(root))) && this.reusing) {
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
    this.spares.delete(root);
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
async function empty(root: string, spares?: Spares): Promise<boolean> {
  const tick = breather();
  try {
    let emptied = 0;
    for (const name of readdirSync(root)) {
      // The owner, and the file of variables a kept bwrap server has bound (rewritten by each sandbox that needs it).
      if (name === 'owner.json' || name === SERVED_ENV_FILE || name === SPARE_DIR) continue;
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
      await clear(p, tick, spares);
      emptied++;
    }
    // A folder a command removed is not made again here: the root goes.
    return emptied === SANDBOX_DIRS.length;
  } catch {
    return false;
  }
}

/**
 * Removes what a folder holds, never following a symlink (a folder's entry says what it is, not
 * where it points); small plain files with no other link go to `spares` while it has room.
 */
async function clear(dir: string, tick: () => Promise<void>, spares?: Spares): Promise<void> {
  for (const d of readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, d.name);
    if (d.isDirectory()) await removeTree(p, tick, spares);
    else if (!(spares && d.isFile() && spare(p, spares))) unlinkSync(p);
    await tick();
  }
}

function spare(file: string, spares: Spares): boolean {
  const st = lstatSync(file);
  return st.isFile() && st.nlink === 1 && st.size <= SMALL_FILE && spares.keep(file);
}

async function removeTree(dir: string, tick: () => Promise<void>, spares?: Spares): Promise<void> {
  await clear(dir, tick, spares);
  rmdirSync(dir);
}
