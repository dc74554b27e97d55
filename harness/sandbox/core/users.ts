import { mkdirSync, writeFileSync } from 'node:fs';
import { readdir, readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { currentOwner, liveness, type Owner } from './owner.js';

/**
 * Use marks for what caches keep and runs read in place (a prepared layer, a commit's tree, a
 * mirror): a folder of files, each naming a process that uses the thing. A prune leaves what a
 * live process uses; a mark of a process that is gone counts for nothing and is removed.
 */
export function markUse(usersDir: string, name: string): string {
  const file = path.join(usersDir, `${name}.json`);
  mkdirSync(usersDir, { recursive: true });
  writeFileSync(file, JSON.stringify(currentOwner()));
  return file;
}

/** A name for marks that last as long as this process (pid and start, so a reused pid differs). */
export function processMark(): string {
  const o = currentOwner();
  return `${o.pid}-${o.start.replace(/[^0-9A-Za-z]+/g, '_')}`;
}

/** Whether a live process (of this or another harness) marks it; dead marks are removed. */
export async function inUse(usersDir: string): Promise<boolean> {
  let used = false;
  for (const name of await readdir(usersDir).catch(() => [] as string[])) {
    const file = path.join(usersDir, name);
    const owner = await readFile(file, 'utf8').then(
      (t) => JSON.parse(t) as Owner,
      () => null,
    );
    if (owner && liveness(owner) !== 'dead') used = true;
    else await rm(file, { force: true });
  }
  return used;
}
