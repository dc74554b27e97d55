import { readdirSync, readFileSync } from 'node:fs';

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
