import { isBuiltinRunner, registerRunnerId, type Runner, type RunnerId } from '../fixtures/manifest.js';
import { RedgreenError } from '../errors.js';
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

/** Adapters added from user code (the public API's registerRunner), beside the built-in ones. */
const CUSTOM = new Map<string, RunnerAdapter>();

/**
 * Adds a runner adapter: manifests may then name its id as their runner. A built-in id cannot be
 * replaced (its reports would mean something else), and an id is registered once.
 */
export function registerRunner(adapter: RunnerAdapter): void {
  const id = adapter.runner;
  if (!/^[a-z0-9][a-z0-9_.-]*$/i.test(id))
    throw new RedgreenError('USAGE', `runner id ${JSON.stringify(id)}: use letters, digits, "_", "." and "-"`);
  if (isBuiltinRunner(id) || (CUSTOM.has(id) && CUSTOM.get(id) !== adapter))
    throw new RedgreenError('USAGE', `a runner "${id}" is already registered`);
  CUSTOM.set(id, adapter);
  registerRunnerId(id);
}

export function adapterFor(runner: RunnerId): RunnerAdapter {
  if (isBuiltinRunner(runner)) return ADAPTERS[runner];
  const custom = CUSTOM.get(runner);
  if (!custom) throw new RedgreenError('MANIFEST_INVALID', `no adapter for runner "${runner}"`);
  return custom;
}
