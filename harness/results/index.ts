import type { Runner } from '../fixtures/manifest.js';
import { avaAdapter } from './ava.js';
import { cargoAdapter } from './cargo.js';
import { exitCodeAdapter } from './exit-code.js';
import { goAdapter } from './go.js';
import { jestAdapter } from './jest.js';
import { junitAdapter } from './junit-runner.js';
import { mochaAdapter } from './mocha.js';
import { nodeTestAdapter } from './node-test.js';
import { pytestAdapter } from './pytest.js';
import type { RunnerAdapter } from './types.js';
import { tapAdapter } from './tap-runner.js';
import { unittestAdapter } from './unittest.js';
import { uvuAdapter } from './uvu.js';
import { vitestAdapter } from './vitest.js';

/** One adapter per runner id: the compiler refuses a runner without one. */
const ADAPTERS: Record<Runner, RunnerAdapter> = {
  pytest: pytestAdapter,
  unittest: unittestAdapter,
  'node-test': nodeTestAdapter,
  vitest: vitestAdapter,
  jest: jestAdapter,
  mocha: mochaAdapter,
  ava: avaAdapter,
  tap: tapAdapter,
  uvu: uvuAdapter,
  go: goAdapter,
  cargo: cargoAdapter,
  junit: junitAdapter,
  'exit-code': exitCodeAdapter,
};

export function adapterFor(runner: Runner): RunnerAdapter {
  return ADAPTERS[runner];
}
