import { execFileSync } from 'node:child_process';
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import { median, ms } from './stats.js';

const CLI = fileURLToPath(new URL('../cli.js', import.meta.url));
const ROUNDS = 10;

/** Wall time of one command, run to its end. */
function timeOf(args: string[]): number {
  const t = performance.now();
  execFileSync(process.execPath, args, { stdio: 'ignore' });
  return performance.now() - t;
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
}
