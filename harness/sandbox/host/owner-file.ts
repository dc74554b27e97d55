import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { currentOwner, type Owner } from '../core/owner.js';
import { rewriteSync } from '../core/rewrite.js';

// A host sandbox folder's owner.json: written by whatever makes such a folder (a sandbox, a patch's
// staging copy), read by gc (gc.ts). Apart from gc, so that making one loads nothing of gc's.

const OWNER = 'owner.json';

export interface OwnerFile extends Owner {
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
export async function readOwner(root: string): Promise<OwnerFile | null> {
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
