import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { EXEC_MARKER_VAR, MARKER_VAR } from '../core/kill-script.js';
import type { PidWindow } from './pid-clock.js';

function signal(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(pid, sig);
  } catch {
    // ESRCH: already gone. EPERM cannot happen for our own children.
  }
}

/** Up to this many pids, a window's pids are read one by one instead of listing /proc. */
const DIRECT_PROBES = 64;

/** Every pid in /proc but ours. */
function listProc(): number[] {
  try {
    return readdirSync('/proc')
      .map(Number)
      .filter((p) => Number.isInteger(p) && p !== process.pid);
  } catch {
    return []; // no /proc (macOS): process groups are all we have
  }
}

/**
 * Pids that may carry a marker: those of a window (a short command's few are named directly, with
 * no listing of /proc), or every one when there is no window or it cannot tell.
 */
function candidates(window: PidWindow | null): number[] {
  const r = window?.range();
  if (!r) return listProc();
  const { after, last, wrapped } = r;
  if (!wrapped && last - after <= DIRECT_PROBES) return Array.from({ length: last - after }, (_, i) => after + 1 + i);
  return listProc().filter(wrapped ? (p) => p > after || p <= last : (p) => p > after && p <= last);
}

/**
 * PIDs of live processes whose environment carries `<name>=<value>` (Linux /proc). A few
 * candidates are read synchronously (cheaper than a promise each); a full scan in parallel.
 */
export async function findMarked(value: string, window: PidWindow | null = null, name: string = MARKER_VAR): Promise<number[]> {
  const needle = Buffer.from(`${name}=${value}\0`);
  const pids = candidates(window);
  const marked = (pid: number, environ: Buffer | null) => environ !== null && environ.includes(needle);
  if (pids.length <= DIRECT_PROBES) {
    // Most of a short command's pids are gone by now: asking first costs less than a thrown error.
    return pids.filter((pid) => {
      try {
        return existsSync(`/proc/${pid}`) && marked(pid, readFileSync(`/proc/${pid}/environ`));
      } catch {
        return false;
      }
    });
  }
  const found: number[] = [];
  await Promise.all(
    pids.map(async (pid) => {
      if (marked(pid, await readFile(`/proc/${pid}/environ`).catch(() => null))) found.push(pid);
    }),
  );
  return found;
}

/**
 * Kills a command's process group, then every process still carrying its marker (children that
 * called setsid or were re-parented to init). Repeats until a scan finds none, since a process
 * may fork between the scan and the kill; bounded so a fork bomb cannot pin us. `marker` is a
 * command's exec marker, found among the pids of its window.
 */
export async function killTree(pgid: number | undefined, marker: string, window: PidWindow | null): Promise<number> {
  if (pgid) signal(-pgid, 'SIGKILL');
  return killMarked(marker, window, EXEC_MARKER_VAR);
}

/** Every process of a sandbox, whatever command started it (destroy after a harness crash: gc). */
export function killSandbox(sandboxId: string): Promise<number> {
  return killMarked(sandboxId, null, MARKER_VAR);
}

async function killMarked(value: string, window: PidWindow | null, name: string): Promise<number> {
  let killed = 0;
  for (let round = 0; round < 50; round++) {
    const pids = await findMarked(value, window, name);
    if (!pids.length) break;
    for (const pid of pids) signal(pid, 'SIGKILL');
    killed += pids.length;
  }
  return killed;
}
