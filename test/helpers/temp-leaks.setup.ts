import { readdirSync } from 'node:fs';
import os from 'node:os';

/**
 * The whole run's check that nothing is left in the temp folder: every folder the harness makes
 * there (`redgreen-local-*`, `redgreen-staging-*`, …) and every one a test makes (`rg-*`) must be
 * gone once all test files have ended. What was there before the run (another run's, a developer's)
 * is not this run's business. Registered first in the e2e project (which every full run has), so
 * its check comes after the shared recorded run's folder is removed (teardowns run in reverse).
 */
const OURS = /^(rg|redgreen)-/;

const ours = () =>
  new Set(
    readdirSync(os.tmpdir(), { withFileTypes: true })
      .filter((d) => d.isDirectory() && OURS.test(d.name))
      .map((d) => d.name),
  );

export default function setup(): () => void {
  const before = ours();
  return () => {
    const left = [...ours()].filter((name) => !before.has(name)).sort();
    if (!left.length) return;
    // Vitest reports an error thrown here but still exits 0: the exit code says it instead.
    console.error(
      `the tests left ${left.length} folder(s) in ${os.tmpdir()}: ${left.slice(0, 20).join(', ')}${left.length > 20 ? ', …' : ''}`,
    );
    process.exitCode = 1;
  };
}
