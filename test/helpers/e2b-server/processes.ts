/**
 * TEST DOUBLE of E2B (see README.md): a sandbox's processes are plain child processes of the
 * double. Like envd, a process is started with exactly the cmd/args/envs/cwd it is given, outlives
 * a dropped stream, and reports `exit status N` or `signal: killed` when it ends. Everything a
 * sandbox started carries `E2B_SANDBOX_ID=<id>`, which is how a dying sandbox finds its processes.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import type { DoubleSandbox } from './state.js';

/** What a template built for redgreen provides: this machine's tools, CA bundles and proxies. */
const TEMPLATE_VARS = [
  'PYENV_ROOT',
  'NODE_EXTRA_CA_CERTS',
  'SSL_CERT_FILE',
  'SSL_CERT_DIR',
  'REQUESTS_CA_BUNDLE',
  'PIP_CERT',
  'http_proxy',
  'https_proxy',
  'no_proxy',
  'HTTP_PROXY',
  'HTTPS_PROXY',
  'NO_PROXY',
];
export const TEMPLATE_PATH = process.env.PATH ?? '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';
const TEMPLATE_ENV: Record<string, string> = Object.fromEntries(
  TEMPLATE_VARS.flatMap((k) => (process.env[k] !== undefined ? [[k, process.env[k]!]] : [])),
);

export interface EndEvent {
  exitCode: number;
  exited: boolean;
  status: string;
}

export interface DoubleProcess {
  pid: number;
  child: ChildProcess;
  config: { cmd: string; args: string[]; envs: Record<string, string>; cwd?: string };
  tag?: string;
  /** 'data' (stream: 'stdout' | 'stderr', chunk: Buffer) and 'end' (EndEvent). */
  events: EventEmitter;
  result: EndEvent | null;
}

const GO_SIGNAL_NAMES: Record<string, string> = {
  SIGKILL: 'killed',
  SIGTERM: 'terminated',
  SIGINT: 'interrupt',
  SIGSEGV: 'segmentation fault',
};

export function startProcess(
  sb: DoubleSandbox,
  user: string,
  home: string,
  config: DoubleProcess['config'],
  stdin: boolean,
  tag?: string,
): DoubleProcess {
  const env = {
    ...TEMPLATE_ENV,
    PATH: TEMPLATE_PATH,
    HOME: home,
    TMPDIR: path.join(sb.dir, 'tmp'),
    USER: user,
    LOGNAME: user,
    E2B_SANDBOX: 'true',
    E2B_SANDBOX_ID: sb.id,
    ...sb.envVars,
    ...config.envs,
  };
  const child = spawn(config.cmd, config.args, {
    cwd: config.cwd ?? home,
    env,
    detached: true,
    stdio: [stdin ? 'pipe' : 'ignore', 'pipe', 'pipe'],
  });
  if (child.pid === undefined) throw new Error(`cannot start ${config.cmd}`);
  const p: DoubleProcess = { pid: child.pid, child, config, ...(tag ? { tag } : {}), events: new EventEmitter(), result: null };
  p.events.setMaxListeners(0);
  child.stdout!.on('data', (c: Buffer) => p.events.emit('data', 'stdout', c));
  child.stderr!.on('data', (c: Buffer) => p.events.emit('data', 'stderr', c));
  child.on('error', () => undefined);
  child.on('close', (code, signal) => {
    p.result =
      code !== null
        ? { exitCode: code, exited: true, status: `exit status ${code}` }
        : { exitCode: -1, exited: false, status: `signal: ${GO_SIGNAL_NAMES[signal ?? ''] ?? signal}` };
    sb.processes.delete(p.pid);
    p.events.emit('end', p.result);
  });
  sb.processes.set(p.pid, p);
  return p;
}

function signal(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(pid, sig);
  } catch {
    // already gone
  }
}

export function signalProcess(p: DoubleProcess, sig: NodeJS.Signals): void {
  signal(p.pid, sig);
}

async function markedBy(sandboxId: string): Promise<number[]> {
  const needle = Buffer.from(`E2B_SANDBOX_ID=${sandboxId}\0`);
  const found: number[] = [];
  await Promise.all(
    (await readdir('/proc')).map(async (name) => {
      if (!/^\d+$/.test(name)) return;
      const env = await readFile(`/proc/${name}/environ`).catch(() => null);
      if (env?.includes(needle)) found.push(Number(name));
    }),
  );
  return found;
}

/** The sandbox's "VM" goes away: every process group and every process carrying its id dies. */
export async function killSandboxProcesses(sb: DoubleSandbox): Promise<void> {
  for (const p of sb.processes.values()) signal(-p.pid, 'SIGKILL');
  for (let round = 0; round < 50; round++) {
    const pids = await markedBy(sb.id);
    if (!pids.length) break;
    for (const pid of pids) signal(pid, 'SIGKILL');
  }
}
