import { readdirSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

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
