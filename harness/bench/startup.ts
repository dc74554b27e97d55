import { execFileSync } from 'node:child_process';
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
 * what a user waits for before any work starts.
 */
export function benchStartup(fixtureId: string): void {
  const med = (args: string[]) => median(Array.from({ length: ROUNDS }, () => timeOf(args)));
  const node = med(['-e', '0']);
  const version = med([CLI, '--version']);
  const help = med([CLI, '--help']);
  const validate = med([CLI, 'validate', fixtureId]);
  console.log(`\nCLI start (median of ${ROUNDS})`);
  console.log(`  node -e 0                     ${ms(node)}`);
  console.log(`  redgreen --version            ${ms(version)}   ${(version / node).toFixed(2)}× node -e 0 (target ≤ 1.5×)`);
  console.log(`  redgreen --help               ${ms(help)}`);
  console.log(`  redgreen validate <one>       ${ms(validate)}   (target ≤ 300 ms; ${fixtureId})`);
}
