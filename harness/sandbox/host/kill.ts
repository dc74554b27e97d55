import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { EXEC_MARKER_VAR, MARKER_VAR } from '../core/kill-script.js';

function signal(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(pid, sig);
  } catch {
    // ESRCH: already gone. EPERM cannot happen for our own children.
  }
}

/** The pid the kernel handed out last (/proc/loadavg's fifth field); null if unknown. */
function lastPid(): number | null {
  try {
    const last = Number(readFileSync('/proc/loadavg', 'latin1').trim().split(/\s+/)[4]);
    return Number.isInteger(last) && last > 0 ? last : null;
  } catch {
    return null;
  }
}

/**
 * Read once: whether /proc lists the pids of this process's own pid namespace (loadavg counts in
 * the reader's namespace, the listing in the mount's), and how far the counter goes. Fewer than a
 * million pids a second can be handed out (a fork alone costs tens of microseconds, and the pid
 * allocator is one lock), so the counter cannot come all the way round in pid_max/1M seconds.
 */
const PROC = (() => {
  try {
    const usable = Number(readlinkSync('/proc/self')) === process.pid && lastPid() !== null;
    const pidMax = Number(readFileSync('/proc/sys/kernel/pid_max', 'latin1').trim());
    return { usable: usable && Number.isInteger(pidMax), pidMax, wrapMs: pidMax / 1000 };
  } catch {
    return { usable: false, pidMax: 0, wrapMs: 0 };
  }
})();

/** Pids below this are never handed out again after the counter wraps (the kernel's RESERVED_PIDS). */
const RESERVED_PIDS = 300;

/**
 * Which pids a command may have created. The kernel hands pids out in increasing order, wrapping
 * at pid_max, so everything a command started has a pid handed out after the last one before it
 * started: reading only those environments keeps a kill's cost to the processes born during the
 * command, not every process of the machine. The counter is sampled while the command runs, often
 * enough that it cannot wrap between two samples; once it may have come all the way round (or a
 * sample came late), the window is spent and the scan is full.
 */
export class PidWindow {
  private last: number;
  private lastAt = performance.now();
  private advanced = 0;
  private spent = false;
  private readonly timer: NodeJS.Timeout;

  private constructor(readonly after: number) {
    this.last = after;
    this.timer = setInterval(() => this.sample(), PROC.wrapMs / 4);
    this.timer.unref();
  }

  /** Opened just before a command starts; null where pids cannot be bounded (every scan is then full). */
  static open(): PidWindow | null {
    const after = PROC.usable ? lastPid() : null;
    return after === null ? null : new PidWindow(after);
  }

  private sample(): number | null {
    const now = performance.now();
    const cur = lastPid();
    if (cur === null || now - this.lastAt >= PROC.wrapMs) this.spent = true;
    else this.advanced += cur >= this.last ? cur - this.last : PROC.pidMax - this.last + (cur - RESERVED_PIDS);
    if (this.advanced >= PROC.pidMax - RESERVED_PIDS) this.spent = true;
    if (cur !== null) this.last = cur;
    this.lastAt = now;
    return this.spent ? null : cur;
  }

  /** Filters /proc's pids to those handed out since the window opened; null when it cannot tell. */
  filter(pids: number[]): number[] | null {
    const last = this.sample();
    if (last === null) return null;
    const { after } = this;
    if (this.advanced === 0 && last === after) return [];
    return last >= after && this.advanced < PROC.pidMax - after
      ? pids.filter((p) => p > after && p <= last)
      : pids.filter((p) => p > after || p <= last);
  }

  close(): void {
    clearInterval(this.timer);
  }
}

/** Pids in /proc: all of them, or only those a window allows. */
function candidates(window: PidWindow | null): number[] {
  let names: string[];
  try {
    names = readdirSync('/proc');
  } catch {
    return []; // no /proc (macOS): process groups are all we have
  }
  const pids = names.map(Number).filter((p) => Number.isInteger(p) && p !== process.pid);
  return window?.filter(pids) ?? pids;
}

/**
 * PIDs of live processes whose environment carries `<name>=<value>` (Linux /proc). A few
 * candidates are read synchronously (cheaper than a promise each); a full scan in parallel.
 */
export async function findMarked(value: string, window: PidWindow | null = null, name: string = MARKER_VAR): Promise<number[]> {
  const needle = Buffer.from(`${name}=${value}\0`);
  const pids = candidates(window);
  const marked = (pid: number, environ: Buffer | null) => environ !== null && environ.includes(needle);
  if (pids.length <= 64) {
    return pids.filter((pid) => {
      try {
        return marked(pid, readFileSync(`/proc/${pid}/environ`));
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
