import { readFileSync } from 'node:fs';
import os from 'node:os';
import { Sandbox as SdkSandbox, type ConnectionOpts, type SandboxInfo } from 'e2b';
import { describeError } from '../../errors.js';
import { isTransient } from './errors.js';
import { DEFAULT_RETRY, withRetry } from './retry.js';

/**
 * Orphans. Every sandbox redgreen creates is labelled with its run and with the process that owns
 * the run (host, pid, and the pid's start time, so a recycled pid is not mistaken for the owner).
 * gc lists the labelled sandboxes and kills those whose owner is gone. An owner on another host
 * cannot be checked from here: its sandboxes are kept, and die by their E2B timeout (the lease
 * the owner keeps renewing) unless `allHosts` is asked for. `runIds` kills named runs, alive or not.
 */
export const LABEL = 'redgreen';
export const RUN_KEY = 'redgreen.run';
/** One backend instance: what its close() sweeps (a run id may be shared by several instances). */
export const SESSION_KEY = 'redgreen.session';
const HOST_KEY = 'redgreen.host';
const PID_KEY = 'redgreen.pid';
const START_KEY = 'redgreen.pidstart';

/** A process's start time in clock ticks since boot (/proc/<pid>/stat field 22), or null. */
function pidStart(pid: number | 'self'): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? null;
  } catch {
    return null;
  }
}

let owner: Record<string, string> | undefined;

export function runMetadata(runId: string, session: string): Record<string, string> {
  owner ??= { [HOST_KEY]: os.hostname(), [PID_KEY]: String(process.pid), [START_KEY]: pidStart('self') ?? '' };
  return { [LABEL]: '1', [RUN_KEY]: runId, [SESSION_KEY]: session, ...owner };
}

/** true/false for an owner on this host; null when it runs elsewhere (unknowable from here). */
export function ownerAlive(meta: Record<string, string>): boolean | null {
  if (meta[HOST_KEY] !== os.hostname()) return null;
  const pid = Number(meta[PID_KEY]);
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  const start = pidStart(pid);
  return start === null || !meta[START_KEY] || start === meta[START_KEY];
}

/** Every redgreen sandbox visible with these credentials whose labels include `match` (all pages). */
export async function listLabelled(conn: ConnectionOpts, match: Record<string, string> = {}): Promise<SandboxInfo[]> {
  const metadata = { [LABEL]: '1', ...match };
  const paginator = SdkSandbox.list({ ...conn, query: { metadata, state: ['running', 'paused'] }, limit: 100 });
  const found: SandboxInfo[] = [];
  while (paginator.hasNext) found.push(...(await withRetry(() => paginator.nextItems(), DEFAULT_RETRY, { isTransient })));
  // A service that ignores the filter must not make gc kill someone else's sandboxes.
  return found.filter((s) => Object.entries(metadata).every(([k, v]) => s.metadata[k] === v));
}

export const runLabels = (runId: string) => ({ [RUN_KEY]: runId });

/** Kills one sandbox by id, retrying what is worth retrying; false when it was already gone. */
export function killById(conn: ConnectionOpts, id: string): Promise<boolean> {
  return withRetry(() => SdkSandbox.kill(id, conn), DEFAULT_RETRY, { isTransient });
}

export interface GcOptions {
  connection: ConnectionOpts;
  /** Also kill sandboxes of runs on other hosts, whose owners cannot be checked from here. */
  allHosts?: boolean;
  /** Only these runs (their owner alive or not). */
  runIds?: readonly string[];
  /** Never kill sandboxes of this run (the caller's own). */
  keepRun?: string;
  dryRun?: boolean;
}

export interface GcReport {
  listed: number;
  killed: string[];
  kept: { id: string; run: string; why: string }[];
  failed: { id: string; error: string }[];
}

export async function gcSandboxes(o: GcOptions): Promise<GcReport> {
  const report: GcReport = { listed: 0, killed: [], kept: [], failed: [] };
  const sandboxes = await listLabelled(o.connection);
  report.listed = sandboxes.length;
  await Promise.all(
    sandboxes.map(async (s) => {
      const run = s.metadata[RUN_KEY] ?? '';
      const alive = ownerAlive(s.metadata);
      let why: string | null = null;
      if (run === o.keepRun) why = 'this run';
      else if (o.runIds) why = o.runIds.includes(run) ? null : 'another run';
      else if (alive === true) why = 'its run is alive';
      else if (alive === null && !o.allHosts) why = `its run is on host ${s.metadata[HOST_KEY] ?? '?'} (expires ${s.endAt.toISOString()}; --all-hosts kills it)`;
      if (why) return void report.kept.push({ id: s.sandboxId, run, why });
      if (o.dryRun) return void report.killed.push(s.sandboxId);
      try {
        await killById(o.connection, s.sandboxId);
        report.killed.push(s.sandboxId);
      } catch (e) {
        report.failed.push({ id: s.sandboxId, error: describeError(e) });
      }
    }),
  );
  return report;
}
