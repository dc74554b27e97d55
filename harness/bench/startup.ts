import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { median, ms } from './stats.js';

const CLI = fileURLToPath(new URL('../cli.js', import.meta.url));
const ROUNDS = 10;

/** Wall time of one command, run to its end. */
function timeOf(args: string[], env: NodeJS.ProcessEnv = process.env): number {
  const t = performance.now();
  execFileSync(process.execPath, args, { stdio: 'ignore', env });
  return performance.now() - t;
}

/** The first command after an install or a build: no code cache yet (an empty cache folder), so it compiles the bundle and writes one. */
function timeOfFirst(args: string[]): number {
  const cache = mkdtempSync(path.join(os.tmpdir(), 'rg-bench-code-'));
  try {
    return timeOf(args, { ...process.env, XDG_CACHE_HOME: cache });
  } finally {
    rmSync(cache, { recursive: true, force: true });
  }
}

/**
 * The CLI's own start: `--version` beside `node -e 0`, and `validate` of one fixture (no sandbox):
 * what a user waits for before any work starts. The commands take turns within each round, so a
 * machine whose speed drifts over the seconds this takes moves them all alike.
 */
export function benchStartup(fixtureId: string): void {
  const rounds = Array.from({ length: ROUNDS }, () => ({
    node: timeOf(['-e', '0']),
    version: timeOf([CLI, '--version']),
    help: timeOf([CLI, '--help']),
    validate: timeOf([CLI, 'validate', fixtureId]),
    firstValidate: timeOfFirst([CLI, 'validate', fixtureId]),
  }));
  const med = (k: keyof (typeof rounds)[number]) => median(rounds.map((r) => r[k]));
  const ratios = rounds.map((r) => r.version / r.node);
  console.log(`\nCLI start (median of ${ROUNDS} rounds, the commands in turn; load ${os.loadavg()[0]!.toFixed(2)})`);
  console.log(`  node -e 0                     ${ms(med('node'))}`);
  console.log(
    `  redgreen --version            ${ms(med('version'))}   ${median(ratios).toFixed(2)}× node -e 0 (target ≤ 1.5×; rounds ${Math.min(...ratios).toFixed(2)}–${Math.max(...ratios).toFixed(2)})`,
  );
  console.log(`  redgreen --help               ${ms(med('help'))}`);
  console.log(
    `  redgreen validate <one>       ${ms(med('validate'))}   (target ≤ 300 ms; ${fixtureId}; ${(med('validate') / med('node')).toFixed(1)}× node -e 0)`,
  );
  console.log(`  the same, first after a build ${ms(med('firstValidate'))}   (no code cache yet: compiles the bundle, writes the cache)`);
}
