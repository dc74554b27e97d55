import type { GcRequest } from '../registry.js';
import type { Liveness } from './owner.js';

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

/** The options of `redgreen gc`'s request, as every backend's gc takes them. */
export function gcOptionsOf(request: GcRequest): GcOptions {
  return {
    allHosts: request.allHosts,
    dryRun: request.dryRun,
    ...(request.runIds.length ? { runIds: request.runIds } : {}),
  };
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
