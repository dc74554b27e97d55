import { closeSync, existsSync, openSync, readSync } from 'node:fs';
import { access, constants, mkdir, readFile, rmdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { MIB, type SandboxLimits } from '../core/limits.js';

/** What a host sandbox can enforce of the shared limits (core/limits.ts). */
export type Limits = Pick<SandboxLimits, 'memoryMb' | 'pids' | 'fileSizeMb' | 'diskMb'>;

const V1 = '/sys/fs/cgroup';

const writable = (p: string) =>
  access(p, constants.W_OK).then(
    () => true,
    () => false,
  );

/**
 * A cgroup per sandbox for its memory and process limits (cgroup v2, or v1's memory and pids
 * hierarchies). Commands join it before bubblewrap starts, so nothing they fork escapes it.
 * Where cgroups are not writable, `create` returns null and only rlimits apply.
 */
export class SandboxCgroup {
  private constructor(readonly dirs: string[]) {}

  static async create(name: string, limits: Limits): Promise<SandboxCgroup | null> {
    const v2 = await readFile(`${V1}/cgroup.controllers`, 'utf8').catch(() => null);
    if (v2 !== null) {
      if (!v2.includes('memory') || !v2.includes('pids') || !(await writable(V1))) return null;
      const dir = path.join(V1, name);
      if (
        !(await mkdir(dir).then(
          () => true,
          () => false,
        ))
      )
        return null;
      await writeFile(path.join(dir, 'memory.max'), String(limits.memoryMb * MIB));
      await writeFile(path.join(dir, 'pids.max'), String(limits.pids));
      return new SandboxCgroup([dir]);
    }
    const mem = path.join(V1, 'memory', name);
    const pids = path.join(V1, 'pids', name);
    if (!(await writable(path.join(V1, 'memory'))) || !(await writable(path.join(V1, 'pids')))) return null;
    const made: string[] = [];
    try {
      for (const d of [mem, pids]) {
        await mkdir(d);
        made.push(d);
      }
      await writeFile(path.join(mem, 'memory.limit_in_bytes'), String(limits.memoryMb * MIB));
      await writeFile(path.join(pids, 'pids.max'), String(limits.pids));
      return new SandboxCgroup(made);
    } catch {
      await Promise.all(made.map((d) => rmdir(d).catch(() => undefined)));
      return null;
    }
  }

  /** The cgroup folders a sandbox of this name would have (for gc after its harness died). */
  static existing(name: string): SandboxCgroup {
    return new SandboxCgroup(
      [path.join(V1, name), path.join(V1, 'memory', name), path.join(V1, 'pids', name)].filter((d) => existsSync(d)),
    );
  }

  /** The counter files, opened at the first look and read again at offset 0 (one syscall a look: one before every command). */
  private counterFiles: { oom: number | null; pids: number | null } | null = null;

  /**
   * OOM kills and forks refused at pids.max so far (both only grow): v2's memory.events and
   * pids.events, v1's memory.oom_control and pids.events. What a command adds names the limit it hit.
   */
  async counters(): Promise<{ oomKills: number; pidsMax: number }> {
    const open = (names: string[]) => {
      for (const d of this.dirs)
        for (const n of names) {
          try {
            return openSync(path.join(d, n), 'r');
          } catch {
            // not in this hierarchy
          }
        }
      return null;
    };
    this.counterFiles ??= { oom: open(['memory.events', 'memory.oom_control']), pids: open(['pids.events']) };
    return { oomKills: readCounter(this.counterFiles.oom, 'oom_kill'), pidsMax: readCounter(this.counterFiles.pids, 'max') };
  }

  /** A shell prefix that moves the shell into the cgroup, then execs the rest. */
  joinScript(): string {
    return this.dirs.map((d) => `echo $$ > '${d}/cgroup.procs'`).join(' && ');
  }

  /**
   * Kills whatever is still in the cgroup and removes it. A killed task stays listed until the
   * kernel has finished its exit, so removal waits for the list to empty (bounded).
   */
  async remove(): Promise<void> {
    for (const fd of [this.counterFiles?.oom, this.counterFiles?.pids]) if (fd != null) closeSync(fd);
    this.counterFiles = null;
    for (const d of this.dirs) {
      const deadline = Date.now() + 5000;
      while (
        !(await rmdir(d).then(
          () => true,
          () => false,
        )) &&
        Date.now() < deadline
      ) {
        const pids = (await readFile(path.join(d, 'cgroup.procs'), 'utf8').catch(() => '')).split('\n').filter(Boolean).map(Number);
        for (const pid of pids) {
          try {
            process.kill(pid, 'SIGKILL');
          } catch {
            // already gone
          }
        }
        await new Promise((r) => setTimeout(r, pids.length ? 10 : 1));
      }
    }
  }
}

const counterBuf = Buffer.alloc(4096);

/** A `<key> <n>` line's number in a counter file (0 without the file or the line). */
function readCounter(fd: number | null, key: string): number {
  if (fd === null) return 0;
  try {
    const n = readSync(fd, counterBuf, 0, counterBuf.length, 0);
    const m = new RegExp(`^${key} (\\d+)$`, 'm').exec(counterBuf.toString('latin1', 0, n));
    return m ? Number(m[1]) : 0;
  } catch {
    return 0;
  }
}
