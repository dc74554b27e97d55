import { existsSync, lstatSync, readlinkSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** Where a bubblewrap sandbox's own folders appear inside it. */
export const BWRAP_WORKSPACE = '/workspace';
export const BWRAP_SCRATCH = '/redgreen';
export const BWRAP_HOME = '/home/sandbox';
export const BWRAP_CACHE = '/cache';
/** Where a command server's shell is inside (server.ts): a copy of the host's /bin/sh only the kernel can read. */
export const SERVER_SHELL = '/.redgreen-sh';

/** What of /etc the runtimes need: certificates, users, name resolution, the dynamic linker. */
const ETC = [
  'ssl',
  'ca-certificates',
  'ca-certificates.conf',
  'alternatives',
  'passwd',
  'group',
  'nsswitch.conf',
  'hosts',
  'resolv.conf',
  'localtime',
  'npmrc',
  'ld.so.cache',
  'ld.so.conf',
  'ld.so.conf.d',
  'python3',
  'mime.types',
  'os-release',
  'debian_version',
];
const SYSTEM = ['/usr', '/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32'];

export interface BwrapHost {
  /** Host folders holding runtimes outside /usr (pyenv, rustup, nvm …), bound read-only. */
  runtimeRoots: string[];
}

/**
 * Runtime folders to expose: PATH entries outside the system folders (and outside `exclude`,
 * the harness's own tree), plus version-manager roots those entries need.
 */
export function detectRuntimeRoots(env: NodeJS.ProcessEnv, exclude: string[]): string[] {
  const roots = new Set<string>();
  const home = os.homedir();
  for (const dir of (env.PATH ?? '').split(':')) {
    if (!dir || !path.isAbsolute(dir) || !existsSync(dir)) continue;
    if (SYSTEM.some((s) => dir === s || dir.startsWith(`${s}/`))) continue;
    // npm puts node_modules/.bin on PATH: a project's tree is never a runtime to expose.
    if (dir.split('/').includes('node_modules')) continue;
    if (exclude.some((e) => dir === e || dir.startsWith(`${e}/`))) continue;
    roots.add(dir);
  }
  const pyenv = env.PYENV_ROOT;
  if (pyenv && existsSync(pyenv)) {
    for (const r of [...roots]) if (r.startsWith(`${pyenv}/`)) roots.delete(r);
    roots.add(pyenv);
  }
  const rustup = env.RUSTUP_HOME ?? path.join(home, '.rustup');
  if ([...roots].some((r) => r.includes('.cargo')) && existsSync(rustup)) roots.add(rustup);
  return [...roots].sort();
}

export interface BwrapArgsInput {
  host: BwrapHost;
  workspaceHost: string;
  scratchHost: string;
  homeHost: string;
  tmpHost: string;
  cwd: string;
  env: Record<string, string>;
  network: boolean;
  /** A shared download cache, bound read-write only for setup (network) commands. */
  cacheHost?: string;
  /** With network: the resolv.conf naming the user-mode network's DNS forwarder, over the host's. */
  resolvConfHost?: string;
  /** For a command server: the fd bwrap reads the server's shell from (SERVER_SHELL). */
  serverShellFd?: number;
  /** For a command server: the host file of the sandbox's variables its commands source, bound read-only at SERVED_ENV. */
  servedEnvHost?: string;
}

/** Where a command server's file of variables is inside the namespace (host/server-process.ts: ServedEnv). */
export const SERVED_ENV = '/.redgreen-env';

/**
 * What runs as the namespace's init: a shell that runs the command as an ordinary foreground child
 * (default signal dispositions, so `kill -9 $$` and SIGINT behave as anywhere else; an init is
 * immune to signals from inside its namespace), reaps whatever is re-parented to it while it
 * waits, and exits with the command's status. Through sh, a missing program exits 127 as on every
 * backend (bwrap itself would say 1).
 */
export function bwrapArgv(command: string | readonly string[]): string[] {
  const inner = typeof command === 'string' ? ['/bin/sh', '-c', command] : [...command];
  return ['/bin/sh', '-c', '"$@"; exit $?', 'sh', ...inner];
}

/** The host's system folders, read-only (a merged /usr's links as links). */
export function systemArgs(): string[] {
  const a: string[] = [];
  for (const s of SYSTEM) {
    if (!existsSync(s)) continue;
    if (lstatSync(s).isSymbolicLink()) a.push('--symlink', readlinkSync(s), s);
    else a.push('--ro-bind', s, s);
  }
  return a;
}

/**
 * bubblewrap's argv: every namespace unshared (with network, the user-mode namespace the command was
 * started in is shared: see user-net.ts), a read-only and minimal
 * host (system folders, selected /etc, runtime roots — never the host's home), a private
 * workspace, scratch, HOME and /tmp, a cleared environment, no capabilities, a new session, and
 * death with the harness.
 */
export function bwrapArgs(i: BwrapArgsInput): string[] {
  // --as-pid-1: the command's wrapper (bwrapArgv) is the namespace's init, and bwrap reports its
  // exit only once the kernel has killed and reaped everything else in the namespace; with
  // bwrap's own init, it reports the command's exit while the namespace is still being torn down.
  const a = ['--unshare-all', '--as-pid-1', '--die-with-parent', '--new-session', '--cap-drop', 'ALL', '--hostname', 'redgreen'];
  if (i.network) a.push('--share-net');
  a.push(...systemArgs());
  for (const e of ETC) if (existsSync(`/etc/${e}`)) a.push('--ro-bind', `/etc/${e}`, `/etc/${e}`);
  if (i.network && i.resolvConfHost) a.push('--ro-bind', i.resolvConfHost, '/etc/resolv.conf');
  for (const r of i.host.runtimeRoots) a.push('--ro-bind', r, r);
  // Shared memory and message queues on filesystems of their own: what a command leaves there can
  // be seen and removed (kept.ts), while the rest of /dev and the root become read-only below.
  a.push('--proc', '/proc', '--dev', '/dev', '--tmpfs', '/dev/shm', '--mqueue', '/dev/mqueue');
  a.push('--bind', i.tmpHost, '/tmp', '--bind', i.homeHost, BWRAP_HOME);
  a.push('--bind', i.workspaceHost, BWRAP_WORKSPACE, '--bind', i.scratchHost, BWRAP_SCRATCH);
  if (i.network && i.cacheHost) a.push('--bind', i.cacheHost, BWRAP_CACHE);
  // Execute-only, so the server started from it is not dumpable (server.ts).
  if (i.serverShellFd !== undefined) a.push('--perms', '0111', '--ro-bind-data', String(i.serverShellFd), SERVER_SHELL);
  if (i.servedEnvHost) a.push('--ro-bind', i.servedEnvHost, SERVED_ENV);
  // The namespace's own root and /dev (tmpfs bwrap made to hold the mounts) take no writes: only
  // the bound folders, /dev/shm and /dev/mqueue do, so nothing else of a command outlives it.
  a.push('--remount-ro', '/dev', '--remount-ro', '/');
  a.push('--chdir', i.cwd, '--clearenv');
  for (const [k, v] of Object.entries(i.env)) a.push('--setenv', k, v);
  return a;
}
