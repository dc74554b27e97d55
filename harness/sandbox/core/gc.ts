import { readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { LINK_FOLDER_PREFIX, liveness, ownerOfFolder, type Liveness, type Owner } from './owner.js';

/**
 * What `redgreen gc` (and a run's start, which collects first) asks of every backend's gc: host
 * folders, Docker objects and E2B sandboxes are all things of a run, made by an owner process,
 * and are removed by the same rule (`keepReason`). A backend adds only what its own store needs
 * (an E2B connection, a Docker label filter).
 */
export interface GcOptions {
  /** Also remove what owners on other hosts made: their liveness cannot be checked from here. */
  allHosts?: boolean;
  /** Only report what would be removed. */
  dryRun?: boolean;
  /** Only these runs, their owner alive or not. */
  runIds?: readonly string[];
  /** Never this run (the caller's own). */
  keepRun?: string;
}

/** Why gc keeps something: its owner's liveness, or the options naming runs. */
export type KeepReason = Exclude<Liveness, 'dead'> | 'this-run' | 'another-run';

/**
 * Why gc keeps a thing of `run` (null: remove it). Liveness is asked only when the options do not
 * settle it, since naming runs removes them whatever their owner's state.
 */
export function keepReason(run: string, owner: () => Liveness, o: GcOptions): KeepReason | null {
  if (o.keepRun !== undefined && run === o.keepRun) return 'this-run';
  if (o.runIds) return o.runIds.includes(run) ? null : 'another-run';
  const alive = owner();
  if (alive === 'dead' || (alive === 'other-host' && o.allHosts)) return null;
  return alive;
}

export type SweepOutcome = { kept: KeepReason } | { removed: true } | { failed: unknown };

/**
 * One thing through gc: kept, reported (a dry run), or removed. Something removed meanwhile by its
 * own run (`alreadyGone` says so of the error) is what gc wanted, so it counts as removed.
 */
export async function sweep(
  keep: KeepReason | null,
  o: GcOptions,
  remove: () => Promise<unknown>,
  alreadyGone: (e: unknown) => boolean = () => false,
): Promise<SweepOutcome> {
  if (keep) return { kept: keep };
  if (o.dryRun) return { removed: true };
  try {
    await remove();
    return { removed: true };
  } catch (e) {
    return alreadyGone(e) ? { removed: true } : { failed: e };
  }
}

/** A folder of the host's temp folder that gc looks after: whose it is, and how it goes. */
export interface OwnedFolder {
  owner: Owner;
  runId: string;
  remove: () => Promise<unknown>;
}

/**
 * Removes the folders of `baseDir` that `owned` recognises and gc does not keep; returns them (or,
 * on a dry run, those it would remove). A folder that cannot be removed is the host's problem,
 * not one run's: it throws at once.
 */
export async function gcFolders(
  baseDir: string,
  o: GcOptions,
  owned: (folder: string, name: string) => Promise<OwnedFolder | null> | OwnedFolder | null,
): Promise<string[]> {
  const removed: string[] = [];
  for (const name of await readdir(baseDir).catch(() => [] as string[])) {
    const folder = path.join(baseDir, name);
    const found = await owned(folder, name);
    if (!found) continue;
    const r = await sweep(
      keepReason(found.runId, () => liveness(found.owner), o),
      o,
      found.remove,
    );
    if ('failed' in r) throw r.failed;
    if ('removed' in r) removed.push(folder);
  }
  return removed;
}

/**
 * A Docker link's folder (docker/link.ts), whose maker was killed before its exit hook could remove
 * it: its name says who made it. Swept by the host gc at each run's start, and by an engine's gc.
 */
export function linkFolder(folder: string, name: string): OwnedFolder | null {
  const owner = ownerOfFolder(LINK_FOLDER_PREFIX, name);
  return owner && { owner, runId: '', remove: () => rm(folder, { recursive: true, force: true }) };
}

/** The link folders (linkFolder) of `baseDir` whose maker is gone. */
export function gcLinkFolders(baseDir: string = os.tmpdir(), o: GcOptions = {}): Promise<string[]> {
  return gcFolders(baseDir, o, linkFolder);
}
