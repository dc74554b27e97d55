import { execFile } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { gcHostFolders } from '../../harness/sandbox/host/gc.js';
import { REPO } from './cli.js';

/** A number nobody else's `sleep` uses, so a test can find its own processes by command line. */
export function uniqueSleep(): string {
  return `${1000 + Math.floor(Math.random() * 8000)}.${Math.floor(Math.random() * 1e6)}`;
}

/** PIDs of host processes whose command line contains `token` (sees sandboxed processes too). */
export function processesWith(token: string): number[] {
  const found: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    let cmd: string;
    try {
      cmd = readFileSync(`/proc/${name}/cmdline`, 'utf8');
    } catch {
      continue;
    }
    if (cmd.split('\0').includes(token)) found.push(Number(name));
  }
  return found;
}

/** Host sandbox folders (local, bwrap, staging) in the temp folder whose owner file names this run. */
export function hostFoldersOfRun(runId: string, base: string = os.tmpdir()): string[] {
  return readdirSync(base)
    .filter((name) => name.startsWith('redgreen-'))
    .filter((name) => {
      try {
        return (JSON.parse(readFileSync(path.join(base, name, 'owner.json'), 'utf8')) as { runId?: string }).runId === runId;
      } catch {
        return false;
      }
    });
}

/** Whether a process is still running (not gone, not a zombie). */
export function isRunning(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}

/**
 * Runs an ES module body in a new Node process and returns the pids of that process's
 * descendants as they were just before it ended (what it left running: servers and their pipes).
 */
export async function descendantsLeftBy(body: string): Promise<number[]> {
  const script = `${body}
    const { readFileSync: rf } = await import('node:fs');
    const below = (pid) => {
      try {
        return rf('/proc/' + pid + '/task/' + pid + '/children', 'utf8').trim().split(/\\s+/).filter(Boolean).map(Number).flatMap((p) => [p, ...below(p)]);
      } catch {
        return [];
      }
    };
    console.log(JSON.stringify(below(process.pid)));`;
  const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', script], { timeout: 60_000 });
  return JSON.parse(stdout.trim().split('\n').at(-1)!) as number[];
}

/**
 * A program that opens a host backend (`className` from `module`, a path under dist/), runs `body`
 * with a sandbox `sb` of it, and ends without closing the backend: `check` gets the processes it
 * left (listed just before it ended). Its sandbox folders are in a folder of their own, which gc
 * then removes with what the unclosed backend kept.
 */
export async function unclosedHostBackend(
  module: string,
  className: string,
  body: string,
  check: (pids: number[]) => Promise<void>,
): Promise<void> {
  const base = await mkdtemp(path.join(os.tmpdir(), 'rg-no-close-'));
  try {
    const pids = await descendantsLeftBy(`
      const { ${className} } = await import(${JSON.stringify(path.join(REPO, 'dist', module))});
      const backend = new ${className}({ baseDir: ${JSON.stringify(base)} });
      await backend.open();
      const sb = await backend.create({ runId: 'no-close', fixtureId: 'x' });
      ${body}
      await sb.destroy();`);
    await check(pids);
  } finally {
    await gcHostFolders(base);
    await rm(base, { recursive: true, force: true });
  }
}
