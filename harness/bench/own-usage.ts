// What a measured Node.js script (measured-cli.ts, floor-harness.ts) writes of itself for
// measureScript: its own CPU, the commands it ran excluded (they are its children), and its peak RSS.
import { writeFileSync } from 'node:fs';

export interface OwnUsage {
  userMs: number;
  systemMs: number;
  maxRssKb: number;
}

/** Writes this process's usage so far to `file`. */
export function writeOwnUsage(file: string): void {
  const cpu = process.cpuUsage();
  const usage: OwnUsage = { userMs: cpu.user / 1000, systemMs: cpu.system / 1000, maxRssKb: process.resourceUsage().maxRSS };
  writeFileSync(file, JSON.stringify(usage));
}
