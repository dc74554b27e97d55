import { rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { gcFolders, linkFolder, type GcOptions, type OwnedFolder } from '../core/gc.js';
import { unmountSizeLimit } from './disk-limit.js';
import { SandboxCgroup } from './cgroup.js';
import { killSandbox } from './kill.js';
import { unmountOverlay } from './overlay.js';
import { readOwner, type OwnerFile } from './owner-file.js';

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
