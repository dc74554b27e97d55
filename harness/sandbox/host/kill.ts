import { closeSync, existsSync, openSync, readdirSync, readSync } from 'node:fs';
import { EXEC_MARKER_VAR, MARKER_VAR } from '../core/kill-script.js';
import type { PidWindow } from './pid-clock.js';

/** Sends a signal, ignoring a process already gone. */
export function signal(pid: number, sig: NodeJS.Signals): void {
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

/** The kernel's PF_KTHREAD: kernel threads have no environment and are never ours. */
const PF_KTHREAD = 0x00200000;

/**
 * What an empty read of a process's environment means. A process inside execve has none yet
 * (its new memory's env_end is 0, then equal to env_start, until the kernel has laid out the
 * strings), and a read opened just before the exec sees the old memory go away: either may be one
 * of ours. The process's stat tells them apart from a kernel thread or a process that really has
 * no environment (`env -i`).
 */
function emptyEnviron(pid: number): 'exec' | 'reread' | 'none' {
  return emptyEnvironOf(statFields(pid));
}

/** emptyEnviron's answer from a process's stat (statFields; null: gone). */
export function emptyEnvironOf(f: string[] | null): 'exec' | 'reread' | 'none' {
  if (!f || f[0] === 'Z' || f[0] === 'X' || Number(f[6]) & PF_KTHREAD) return 'none';
  const [envStart, envEnd] = [Number(f[47]), Number(f[48])];
  if (!envEnd) return 'exec';
  if (envEnd > envStart) return 'reread';
  // Both ends at one place: an environment of nothing (`env -i`), or one an exec is laying out
  // now (the kernel puts both ends after the arguments, then moves the end past each string).
  // Only a process running (or in a page fault's wait) can be inside an exec.
  return f[0] === 'R' || f[0] === 'D' ? 'exec' : 'none';
}

/** A process's /proc stat fields after its command name (which may hold spaces and parentheses), from field 3 (state) on; null once gone. */
function statFields(pid: number): string[] | null {
  const bytes = readProc(`/proc/${pid}/stat`);
  return bytes && fieldsOf(bytes.toString('latin1'));
}

/** A /proc stat line's fields from field 3 (state) on. */
export function fieldsOf(stat: string): string[] {
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
}

/** What readProc reads into, grown when a file does not fit. */
let procBuf = Buffer.allocUnsafe(64 * 1024);

/**
 * A /proc file's bytes (valid until the next call), or null once the process is gone or not ours
 * to read. The kernel makes these files whole at the read, so a read that does not fill the buffer
 * has reached the end: an open, a read and a close, where readFileSync also asks the size (0 for
 * /proc) and reads once more to see the end. Kills read a few of these per command.
 */
function readProc(file: string): Buffer | null {
  let fd: number;
  try {
    fd = openSync(file, 'r');
  } catch {
    return null;
  }
  try {
    let n = 0;
    for (;;) {
      const got = readSync(fd, procBuf, n, procBuf.length - n, null);
      n += got;
      if (got === 0 || n < procBuf.length) return procBuf.subarray(0, n);
      const bigger = Buffer.allocUnsafe(procBuf.length * 2);
      procBuf.copy(bigger);
      procBuf = bigger;
    }
  } catch {
    return null;
  } finally {
    closeSync(fd);
  }
}

/** Whether a live process (not a zombie) is in process group `pgid`. */
function inGroup(pid: number, pgid: number): boolean {
  const f = statFields(pid);
  return !!f && f[0] !== 'Z' && f[0] !== 'X' && Number(f[2]) === pgid;
}

/** One look at the candidates: those carrying the marker, and those that may but cannot say yet (inside an exec). */
interface Scan {
  marked: number[];
  unsure: number[];
}

/**
 * Live processes whose environment carries `<name>=<value>` (Linux /proc), read synchronously:
 * a short command's few pids are cheaper read in a row than with a promise each, and a full scan
 * is rare (no window, or one the clock lost). `serverGroup`: the group of the command server the
 * command ran in (host/server.ts), led by the server; its other members are the command's too,
 * marked or not (what it started with a cleared environment).
 */
export function findMarked(value: string, window: PidWindow | null = null, name: string = MARKER_VAR, serverGroup?: number): Scan {
  const needle = Buffer.from(`${name}=${value}\0`);
  return findCarrying((environ) => environ.includes(needle), window, serverGroup);
}

/** findMarked's look, for any test of a process's environment. */
function findCarrying(carries: (environ: Buffer) => boolean, window: PidWindow | null, serverGroup?: number): Scan {
  const scan: Scan = { marked: [], unsure: [] };
  const pids = candidates(window);
  const direct = pids.length <= DIRECT_PROBES;
  for (const pid of pids) {
    // Most of a short command's pids are gone by now: asking first costs less than a thrown error.
    if (direct && !existsSync(`/proc/${pid}`)) continue;
    // The environment is tested before any other read of /proc (readProc's bytes last until its next call).
    let environ = readProc(`/proc/${pid}/environ`);
    if (environ?.length === 0) {
      const why = emptyEnviron(pid);
      if (why === 'exec') scan.unsure.push(pid);
      else if (why === 'reread') environ = readProc(`/proc/${pid}/environ`);
    }
    if ((environ && carries(environ)) || (serverGroup && pid !== serverGroup && inGroup(pid, serverGroup))) scan.marked.push(pid);
  }
  return scan;
}

/**
 * Kills a command's process group, then every process still carrying its marker (children that
 * called setsid or were re-parented to init). Repeats until a scan finds none, since a process
 * may fork between the scan and the kill; bounded so a fork bomb cannot pin us. `marker` is a
 * command's exec marker, found among the pids of its window.
 */
export async function killTree(pgid: number | undefined, marker: string, window: PidWindow | null, serverGroup?: number): Promise<number> {
  if (pgid) signal(-pgid, 'SIGKILL');
  return killMarked(() => findMarked(marker, window, EXEC_MARKER_VAR, serverGroup));
}

/** Every process of a sandbox, whatever command started it (destroy after a harness crash: gc). */
export function killSandbox(sandboxId: string): Promise<number> {
  return killMarked(() => findMarked(sandboxId, null, MARKER_VAR));
}

/**
 * Every process of any sandbox of the folders named `folders` (a host sandbox's id is its folder's
 * name, a dash and its own suffix: local.ts): a backend's last look, at its close, for anything
 * a command's own kill missed. One look at every process, whatever the number of sandboxes.
 */
export function killSandboxesOf(folders: readonly string[]): Promise<number> {
  if (!folders.length) return Promise.resolve(0);
  const needles = folders.map((f) => Buffer.from(`${MARKER_VAR}=${f}-`));
  return killMarked(() => findCarrying((environ) => needles.some((n) => environ.includes(n)), null));
}

/**
 * Returns once no process of group `pgid` is left, not even one the kernel is still taking down
 * after a SIGKILL (it stays listed until its exit has run). Sends nothing: the group was signalled
 * as a whole, and a group being killed gains no member. Bounded, as killMarked is.
 */
export async function groupGone(pgid: number): Promise<void> {
  for (let round = 0; round < KILL_ROUNDS; round++) {
    if (!listProc().some((p) => inGroup(p, pgid))) return;
    await pause(round);
  }
}

/** Rounds of a kill before it gives up (a fork bomb outpacing it, a process stuck in the kernel). */
const KILL_ROUNDS = 200;

/**
 * Between two looks, the CPU goes to the processes being taken down for a moment (1 ms, then 2,
 * up to 10): Node cannot wait on a process that is not its child (no pidfd).
 */
const pause = (round: number) => new Promise((r) => setTimeout(r, Math.min(10, 2 ** round)));

/**
 * Kills every process carrying the marker, round after round until a look finds none and no
 * candidate is inside an exec: a killed process keeps its /proc entry until the kernel has run its
 * exit, and an exec'ing one shows its environment only once the exec is done.
 */
async function killMarked(look: () => Scan): Promise<number> {
  let killed = 0;
  for (let round = 0; round < KILL_ROUNDS; round++) {
    const { marked, unsure } = look();
    if (!marked.length && !unsure.length) break;
    for (const pid of marked) signal(pid, 'SIGKILL');
    killed += marked.length;
    await pause(round);
  }
  return killed;
}
