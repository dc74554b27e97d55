import { existsSync } from 'node:fs';
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

  /**
   * OOM kills and forks refused at pids.max so far (both only grow): v2's memory.events and
   * pids.events, v1's memory.oom_control and pids.events. What a command adds names the limit it hit.
   */
  async counters(): Promise<{ oomKills: number; pidsMax: number }> {
    const read = async (files: string[], key: string) => {
      for (const f of files) {
        const text = await readFile(f, 'utf8').catch(() => null);
        const m = text && new RegExp(`^${key} (\\d+)$`, 'm').exec(text);
        if (m) return Number(m[1]);
      }
      return 0;
    };
    const files = (names: string[]) => this.dirs.flatMap((d) => names.map((n) => path.join(d, n)));
    return {
      oomKills: await read(files(['memory.events', 'memory.oom_control']), 'oom_kill'),
      pidsMax: await read(files(['pids.events']), 'max'),
    };
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
