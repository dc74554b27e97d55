import { readFileSync } from 'node:fs';
import os from 'node:os';

/**
 * Labels on everything the Docker backend creates (containers, volumes, build images). The run
 * says what a thing belongs to; host + pid + the pid's start time say whether its owner is still
 * alive, which is all `redgreen gc` needs — a pid alone could have been reused since.
 */
export const LABEL = {
  run: 'redgreen.run',
  /** sandbox | pool | network | image-build | image-stage */
  role: 'redgreen.role',
  fixture: 'redgreen.fixture',
  /** One backend instance: what its close() sweeps. */
  session: 'redgreen.session',
  host: 'redgreen.host',
  pid: 'redgreen.pid',
  pidStart: 'redgreen.pid-start',
} as const;

export type Role = 'sandbox' | 'pool' | 'network' | 'image-build' | 'image-stage';

export interface Owner {
  host: string;
  pid: number;
  /** `<boot id>:<start ticks>`, or '' where /proc is missing. */
  start: string;
}

let bootId: string | null | undefined;

/** When a process started, in a form that changes if its pid is reused (or the host rebooted). */
export function processStart(pid: number): string | null {
  try {
    bootId ??= readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Field 22 (starttime); the command name (field 2) may hold spaces and parentheses.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return `${bootId}:${fields[19]}`;
  } catch {
    return null;
  }
}

let self: Owner | undefined;

export function currentOwner(): Owner {
  self ??= { host: os.hostname(), pid: process.pid, start: processStart(process.pid) ?? '' };
  return self;
}

export function ownerLabels(owner: Owner = currentOwner()): Record<string, string> {
  return { [LABEL.host]: owner.host, [LABEL.pid]: String(owner.pid), [LABEL.pidStart]: owner.start };
}

export type Liveness = 'alive' | 'dead' | 'other-host';

function pidExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Whether the process that created a labelled object still runs. Objects made on another host
 * cannot be judged from here (a shared remote engine): they are `other-host`.
 */
export function ownerLiveness(labels: Record<string, string> | undefined, me: Owner = currentOwner()): Liveness {
  const l = labels ?? {};
  if (l[LABEL.host] !== me.host) return 'other-host';
  const pid = Number(l[LABEL.pid]);
  if (!Number.isInteger(pid) || pid <= 0) return 'dead';
  const recorded = l[LABEL.pidStart] ?? '';
  const now = processStart(pid);
  if (now === null) return recorded === '' && pidExists(pid) ? 'alive' : 'dead';
  return recorded === '' || recorded === now ? 'alive' : 'dead';
}
