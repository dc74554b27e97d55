import { readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { SandboxCgroup } from './cgroup.js';
import { killTree } from './kill.js';

const OWNER = 'owner.json';

interface Owner {
  pid: number;
  sandboxId: string;
  runId: string;
}

/** Marks a host sandbox folder with the harness process that owns it, for `gc` after a kill -9. */
export function writeOwner(root: string, sandboxId: string, runId: string): Promise<void> {
  const owner: Owner = { pid: process.pid, sandboxId, runId };
  return writeFile(path.join(root, OWNER), JSON.stringify(owner));
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Removes host sandboxes (local, bwrap, staging copies) whose harness process is gone: kills the
 * processes still carrying their marker, then deletes the folder. Returns what it removed.
 */
export async function gcHostSandboxes(baseDir: string = os.tmpdir()): Promise<string[]> {
  const names = (await readdir(baseDir).catch(() => [] as string[])).filter((n) => n.startsWith('redgreen-'));
  const removed: string[] = [];
  for (const name of names) {
    const root = path.join(baseDir, name);
    const raw = await readFile(path.join(root, OWNER), 'utf8').catch(() => null);
    if (raw === null) continue; // not ours, or still being created
    let owner: Owner;
    try {
      owner = JSON.parse(raw) as Owner;
    } catch {
      continue;
    }
    if (alive(owner.pid)) continue;
    await killTree(undefined, owner.sandboxId);
    await SandboxCgroup.existing(`redgreen-${owner.sandboxId}`).remove();
    await rm(root, { recursive: true, force: true });
    removed.push(root);
  }
  return removed;
}
