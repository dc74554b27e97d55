import { readdir, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { keepReason, sweep, type GcOptions } from '../core/gc.js';
import { currentOwner, LINK_FOLDER_PREFIX, liveness, ownerOfFolder, type Owner } from '../core/owner.js';
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

/** What gc looks after in the host's temp folder: host sandboxes' folders, and Docker links' folders. */
export type HostFolderKind = 'sandbox' | 'link';

/**
 * Removes host sandboxes (local, bwrap, staging copies) whose harness process is gone (or, with
 * `o.runIds`, those of the runs named), and Docker link folders whose harness is gone; `kinds`
 * narrows it to some of them. Returns the folders it removed (or would, on a dry run).
 */
export async function gcHostFolders(
  baseDir: string = os.tmpdir(),
  o: GcOptions = {},
  kinds: readonly HostFolderKind[] = ['sandbox', 'link'],
): Promise<string[]> {
  const removed: string[] = [];
  for (const name of await readdir(baseDir).catch(() => [] as string[])) {
    const folder = path.join(baseDir, name);
    const found = await ownedFolder(folder, name);
    if (!found || !kinds.includes(found.kind)) continue;
    const r = await sweep(
      keepReason(found.runId, () => liveness(found.owner), o),
      o,
      found.remove,
    );
    // A folder that cannot be removed is the host's problem, not one sandbox's: say so at once.
    if ('failed' in r) throw r.failed;
    if ('removed' in r) removed.push(folder);
  }
  return removed;
}

/**
 * A folder of the host's temp folder that gc looks after, with its owner and how it goes: a
 * sandbox's (its owner.json names them), or a Docker link's, whose maker was killed before its exit
 * hook could remove it (its name says who made it).
 */
async function ownedFolder(
  folder: string,
  name: string,
): Promise<{ kind: HostFolderKind; owner: Owner; runId: string; remove: () => Promise<unknown> } | null> {
  const linkOwner = ownerOfFolder(LINK_FOLDER_PREFIX, name);
  if (linkOwner) return { kind: 'link', owner: linkOwner, runId: '', remove: () => rm(folder, { recursive: true, force: true }) };
  if (!name.startsWith('redgreen-')) return null;
  const owner = await readOwner(folder);
  return owner && { kind: 'sandbox', owner, runId: owner.runId, remove: () => removeSandbox(folder, owner) };
}
