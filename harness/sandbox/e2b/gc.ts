import { describeError } from '../../errors.js';
import { keepReason, sweep, type GcOptions, type KeepReason } from '../core/gc.js';
import { labelledLiveness, OWNER_LABEL, ownerLabels } from '../core/owner.js';
import { isTransient } from './errors.js';
import { DEFAULT_RETRY, withRetry } from './retry.js';
import { killSandbox, listSandboxes, type ListedSandbox } from './wire/api.js';
import type { E2BConnection } from './wire/connection.js';

/**
 * Orphans. Every sandbox redgreen creates is labelled with its run and with the process that owns
 * the run (core/owner.ts: host, pid, and the pid's start time, so a recycled pid is not mistaken
 * for the owner). gc lists the labelled sandboxes and kills those whose owner is gone. An owner on
 * another host cannot be checked from here: its sandboxes are kept, and die by their E2B timeout
 * (the lease the owner keeps renewing) unless `allHosts` is asked for. `runIds` kills named runs,
 * alive or not. The owner keys are the Docker backend's; sandboxes made by older redgreen versions
 * carry the start under `redgreen.pidstart` instead, which is still read (LEGACY_START_LABEL), so
 * they are still judged by their owner's start time.
 */
export const LABEL = 'redgreen';
export const RUN_KEY = 'redgreen.run';
/** One backend instance: what its close() sweeps (a run id may be shared by several instances). */
export const SESSION_KEY = 'redgreen.session';

export function runMetadata(runId: string, session: string): Record<string, string> {
  return { [LABEL]: '1', [RUN_KEY]: runId, [SESSION_KEY]: session, ...ownerLabels() };
}

/** Every redgreen sandbox visible with these credentials whose labels include `match` (all pages). */
export async function listLabelled(conn: E2BConnection, match: Record<string, string> = {}): Promise<ListedSandbox[]> {
  const metadata = { [LABEL]: '1', ...match };
  const found: ListedSandbox[] = [];
  let nextToken: string | undefined;
  do {
    const page = await withRetry(() => listSandboxes(conn, metadata, { limit: 100, ...(nextToken ? { nextToken } : {}) }), DEFAULT_RETRY, {
      isTransient,
    });
    found.push(...page.sandboxes);
    nextToken = page.nextToken;
  } while (nextToken);
  // A service that ignores the filter must not make gc kill someone else's sandboxes.
  return found.filter((s) => Object.entries(metadata).every(([k, v]) => s.metadata[k] === v));
}

export const runLabels = (runId: string) => ({ [RUN_KEY]: runId });

/** Kills one sandbox by id, retrying what is worth retrying; false when it was already gone. */
export function killById(conn: E2BConnection, id: string): Promise<boolean> {
  return withRetry(() => killSandbox(conn, id), DEFAULT_RETRY, { isTransient });
}

export interface E2BGcOptions extends GcOptions {
  connection: E2BConnection;
}

export interface GcReport {
  listed: number;
  killed: string[];
  kept: { id: string; run: string; why: string }[];
  failed: { id: string; error: string }[];
}

function why(keep: KeepReason, s: ListedSandbox): string {
  if (keep === 'this-run') return 'this run';
  if (keep === 'another-run') return 'another run';
  if (keep === 'alive') return 'its run is alive';
  return `its run is on host ${s.metadata[OWNER_LABEL.host] ?? '?'} (expires ${s.endAt?.toISOString() ?? '?'}; --all-hosts kills it)`;
}

export async function gcSandboxes(o: E2BGcOptions): Promise<GcReport> {
  const report: GcReport = { listed: 0, killed: [], kept: [], failed: [] };
  const sandboxes = await listLabelled(o.connection);
  report.listed = sandboxes.length;
  await Promise.all(
    sandboxes.map(async (s) => {
      const run = s.metadata[RUN_KEY] ?? '';
      const r = await sweep(
        keepReason(run, () => labelledLiveness(s.metadata), o),
        o,
        () => killById(o.connection, s.sandboxId),
      );
      if ('kept' in r) report.kept.push({ id: s.sandboxId, run, why: why(r.kept, s) });
      else if ('removed' in r) report.killed.push(s.sandboxId);
      else report.failed.push({ id: s.sandboxId, error: describeError(r.failed) });
    }),
  );
  return report;
}
