import { readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { gcFolders, linkFolder, type GcOptions, type OwnedFolder } from '../core/gc.js';
import { currentOwner, type Owner } from '../core/owner.js';
import { unmountSizeLimit } from './disk-limit.js';
import { rewriteSync } from '../core/rewrite.js';
import { SandboxCgroup } from './cgroup.js';
import { killSandbox } from './kill.js';
import { unmountOverlay } from './overlay.js';

const OWNER = 'owner.json';

interface OwnerFile extends Owner {
  sandboxId: string;
  runId: string;
}

/** Marks a host sandbox folder with the harness process that owns it, for `gc` after a kill -9 (a tiny file: written at once). */
export function writeOwner(root: string, sandboxId: string, runId: string): void {
  const owner: OwnerFile = { ...currentOwner(), sandboxId, runId };
  rewriteSync(path.join(root, OWNER), JSON.stringify(owner));
}

/**
 * The owner.json of a sandbox folder; null when there is none (not ours, or still being created)
 * or it is not readable. Older redgreen versions wrote only the pid: such a folder is this host's
 * (it is in this host's temp folder) and is judged by its pid alone.
 */
async function readOwner(root: string): Promise<OwnerFile | null> {
  const raw = await readFile(path.join(root, OWNER), 'utf8').catch(() => null);
  if (raw === null) return null;
  try {
    const o = JSON.parse(raw) as Partial<OwnerFile>;
    return {
      host: o.host ?? currentOwner().host,
      pid: Number(o.pid),
      start: o.start ?? '',
      sandboxId: o.sandboxId ?? '',
      runId: o.runId ?? '',
    };
  } catch {
    return null;
  }
}

/** Kills the processes still carrying the sandbox's marker, then deletes its cgroup, its size-limit mount and folder. */
async function removeSandbox(root: string, owner: OwnerFile): Promise<void> {
  await killSandbox(owner.sandboxId);
  // Named for the folder (a bwrap server and its cgroup serve the sandboxes that reuse it); once for the sandbox.
  await SandboxCgroup.existing(path.basename(root)).remove();
  await SandboxCgroup.existing(`redgreen-${owner.sandboxId}`).remove();
  if (process.getuid?.() === 0) {
    // A workspace overlay first (a prepared tree below it must never be touched), then the size limit.
    await unmountOverlay(path.join(root, 'workspace'));
    await unmountSizeLimit(root);
  }
  await rm(root, { recursive: true, force: true });
}

/**
 * Removes host sandboxes (local, bwrap, staging copies) whose harness process is gone (or, with
 * `o.runIds`, those of the runs named), and Docker link folders whose harness is gone. Returns the
 * folders it removed (or would, on a dry run).
 */
export function gcHostFolders(baseDir: string = os.tmpdir(), o: GcOptions = {}): Promise<string[]> {
  return gcFolders(baseDir, o, async (folder, name) => linkFolder(folder, name) ?? (await sandboxFolder(folder, name)));
}

/** A host sandbox's folder, named by its owner.json. */
async function sandboxFolder(folder: string, name: string): Promise<OwnedFolder | null> {
  if (!name.startsWith('redgreen-')) return null;
  const owner = await readOwner(folder);
  return owner && { owner, runId: owner.runId, remove: () => removeSandbox(folder, owner) };
}
