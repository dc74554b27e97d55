import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { median } from './stats.js';

/**
 * What this machine's kernel work costs, so figures in milliseconds can be compared across
 * machines (with the bare work's CPU per trivial fixture, printed beside the trivial fixtures):
 * the harness's CPU per fixture is mostly process starts and file operations, and a VM whose
 * kernel work is several times slower pays that in every absolute figure, not in the ratios.
 */
export function machineLine(): string {
  const forks = Array.from({ length: 30 }, () => {
    const t = performance.now();
    spawnSync('/bin/true');
    return performance.now() - t;
  });
  const dir = mkdtempSync(path.join(os.tmpdir(), 'rg-bench-machine-'));
  try {
    const files: number[] = [];
    for (let i = 0; i < 300; i++) {
      const t = performance.now();
      writeFileSync(path.join(dir, `f${i}`), 'x');
      unlinkSync(path.join(dir, `f${i}`));
      files.push(performance.now() - t);
    }
    return `machine: spawn + exit of /bin/true ${median(forks).toFixed(2)} ms, a file created and removed in ${os.tmpdir()} ${(median(files) * 1000).toFixed(0)} µs (medians)`;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
