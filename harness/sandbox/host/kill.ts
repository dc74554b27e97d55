import { readdir, readFile } from 'node:fs/promises';
import { MARKER_VAR } from '../core/kill-script.js';

function signal(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(pid, sig);
  } catch {
    // ESRCH: already gone. EPERM cannot happen for our own children.
  }
}

/** PIDs of live processes whose environment carries `MARKER_VAR=<marker>` (Linux /proc). */
export async function findMarked(marker: string): Promise<number[]> {
  const needle = Buffer.from(`${MARKER_VAR}=${marker}\0`);
  let names: string[];
  try {
    names = await readdir('/proc');
  } catch {
    return []; // no /proc (macOS): process groups are all we have
  }
  const found: number[] = [];
  await Promise.all(
    names.map(async (name) => {
      const pid = Number(name);
      if (!Number.isInteger(pid) || pid === process.pid) return;
      const environ = await readFile(`/proc/${pid}/environ`).catch(() => null);
      if (environ && environ.includes(needle)) found.push(pid);
    }),
  );
  return found;
}

/**
 * Kills a command's process group, then every process still carrying the sandbox marker
 * (children that called setsid or were re-parented to init). Repeats until a scan finds none,
 * since a process may fork between the scan and the kill; bounded so a fork bomb cannot pin us.
 */
export async function killTree(pgid: number | undefined, marker: string): Promise<number> {
  if (pgid) signal(-pgid, 'SIGKILL');
  let killed = 0;
  for (let round = 0; round < 50; round++) {
    const pids = await findMarked(marker);
    if (!pids.length) break;
    for (const pid of pids) signal(pid, 'SIGKILL');
    killed += pids.length;
  }
  return killed;
}
