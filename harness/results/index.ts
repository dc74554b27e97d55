import type { Runner } from '../fixtures/manifest.js';
import { cargoAdapter } from './cargo.js';
import { exitCodeAdapter } from './exit-code.js';
import { goAdapter } from './go.js';
import { junitAdapter } from './junit-runner.js';
import { nodeTestAdapter } from './node-test.js';
import { pytestAdapter } from './pytest.js';
import type { RunnerAdapter } from './types.js';
import { unittestAdapter } from './unittest.js';
import { vitestAdapter } from './vitest.js';

const ADAPTERS: Partial<Record<Runner, RunnerAdapter>> = {
  pytest: pytestAdapter,
  unittest: unittestAdapter,
  'node-test': nodeTestAdapter,
  vitest: vitestAdapter,
  go: goAdapter,
  cargo: cargoAdapter,
  junit: junitAdapter,
  'exit-code': exitCodeAdapter,
};

export function adapterFor(runner: Runner): RunnerAdapter | undefined {
  return ADAPTERS[runner];
}

export function supportedRunners(): Runner[] {
  return Object.keys(ADAPTERS) as Runner[];
}
