import { readFileSync } from 'node:fs';
import os from 'node:os';

/**
 * Who owns what a backend leaves behind (host folders, containers, volumes, remote sandboxes):
 * the harness process that made it. gc removes what belongs to an owner that is gone. A pid alone
 * is not enough — it may have been reused since — so the owner also records when its process
 * started, as `<boot id>:<start ticks>`, which changes with a reused pid or a reboot.
 */
export interface Owner {
  host: string;
  pid: number;
  /** `<boot id>:<start ticks>`, or '' where /proc is missing. */
  start: string;
}

/** alive: keep; dead: collect; other-host: cannot be judged from here (a shared engine or service). */
export type Liveness = 'alive' | 'dead' | 'other-host';

let bootId: string | undefined;

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

function pidExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Whether a recorded start is the start of the process now holding the pid. A start without a
 * boot id (`<ticks>`, what older redgreen versions recorded for e2b) is compared with the ticks only.
 */
function sameStart(recorded: string, now: string): boolean {
  if (recorded.includes(':')) return recorded === now;
  return now.slice(now.indexOf(':') + 1) === recorded;
}

/** Whether `owner` still runs. An owner on another host cannot be checked from here. */
export function liveness(owner: Owner, me: Owner = currentOwner()): Liveness {
  if (owner.host !== me.host) return 'other-host';
  if (!Number.isInteger(owner.pid) || owner.pid <= 0) return 'dead';
  const now = processStart(owner.pid);
  // No /proc entry: the process is gone, unless no start was ever recorded (a host without /proc),
  // where the pid is all there is to check.
  if (now === null) return owner.start === '' && pidExists(owner.pid) ? 'alive' : 'dead';
  return owner.start === '' || sameStart(owner.start, now) ? 'alive' : 'dead';
}

/**
 * A temp folder's name that says which process made it (`<prefix><pid>-<start ticks>-`, mkdtemp
 * adds the rest), for one that holds no owner file: gc can tell its maker is gone after a kill -9,
 * which skips the exit hook that would have removed it.
 */
export function ownedFolderPrefix(prefix: string, me: Owner = currentOwner()): string {
  return `${prefix}${me.pid}-${me.start.slice(me.start.indexOf(':') + 1) || '0'}-`;
}

/** How the name of a Docker link's folder starts (docker/link.ts): a folder of FIFOs, swept by gc (core/gc.ts: linkFolder). */
export const LINK_FOLDER_PREFIX = 'rg-link-';

/** The maker of a folder named by ownedFolderPrefix (a start of '0': none recorded), or null for another name. */
export function ownerOfFolder(prefix: string, name: string, me: Owner = currentOwner()): Owner | null {
  if (!name.startsWith(prefix)) return null;
  const m = /^(\d+)-(\d+)-/.exec(name.slice(prefix.length));
  return m ? { host: me.host, pid: Number(m[1]), start: m[2] === '0' ? '' : m[2]! } : null;
}

/**
 * The owner as string labels, for what carries key/value labels: Docker objects (labels) and
 * E2B sandboxes (metadata). The same keys on both, so `redgreen gc` reads every backend alike.
 */
export const OWNER_LABEL = {
  host: 'redgreen.host',
  pid: 'redgreen.pid',
  start: 'redgreen.pid-start',
} as const;

/**
 * The key e2b sandboxes made by older redgreen versions carry their owner's start under, as start
 * ticks without a boot id. Still read, so those sandboxes are judged by their start time rather
 * than by a pid that may have been reused since; never written any more.
 */
export const LEGACY_START_LABEL = 'redgreen.pidstart';

export function ownerLabels(owner: Owner = currentOwner()): Record<string, string> {
  return { [OWNER_LABEL.host]: owner.host, [OWNER_LABEL.pid]: String(owner.pid), [OWNER_LABEL.start]: owner.start };
}

/**
 * Whether the process that made a labelled object still runs. Every start recorded (the current
 * key, the legacy one) must match: one that does not proves the pid now belongs to another process.
 */
export function labelledLiveness(labels: Record<string, string> | undefined, me: Owner = currentOwner()): Liveness {
  const l = labels ?? {};
  const starts = [l[OWNER_LABEL.start], l[LEGACY_START_LABEL]].filter((s): s is string => s !== undefined);
  const owner = { host: l[OWNER_LABEL.host] ?? '', pid: Number(l[OWNER_LABEL.pid]) };
  const verdicts = (starts.length ? starts : ['']).map((start) => liveness({ ...owner, start }, me));
  return verdicts.find((v) => v !== 'alive') ?? 'alive';
}
