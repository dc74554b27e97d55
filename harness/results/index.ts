import { z } from 'zod';
import { isBuiltinRunner, ManifestSchema, registerRunnerId, type Runner, type RunnerId } from '../fixtures/manifest.js';
import { TEMPLATES, type Template } from '../fixtures/templates.js';
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
  if (adapter.example) checkExample(id, adapter.example);
  CUSTOM.set(id, adapter);
  registerRunnerId(id, { example: Boolean(adapter.example) });
}

/** Where `new` writes an example's files: inside the fixture, and not over the files it writes itself. */
const ExampleFiles = z.record(z.string(), z.string()).superRefine((files, ctx) => {
  for (const p of Object.keys(files)) {
    if (!p.startsWith('/') && p.split('/').every((s) => s && s !== '.' && s !== '..') && p !== 'fixture.json' && p !== 'ISSUE.md') continue;
    ctx.addIssue({
      code: 'custom',
      path: [p],
      message: 'must be a path inside the fixture (relative, no "..", not fixture.json or ISSUE.md)',
    });
  }
});

const ExampleSchema = z
  .object({
    language: z.string().min(1),
    manifest: z
      .object({ test: ManifestSchema.shape.test, setup: ManifestSchema.shape.setup, protected: ManifestSchema.shape.protected })
      .strict(),
    files: ExampleFiles,
    fixed: ExampleFiles,
  })
  .strict()
  .refine((e) => Object.entries(e.fixed).some(([p, text]) => e.files[p] !== text), {
    message: 'its fixed files are the same as its files: the oracle would change nothing',
  });

/** `files["../x"]`, `manifest.test.command`: where in the example a problem is. */
const where = (p: PropertyKey[]) =>
  p.map((s, i) => (typeof s === 'string' && /^[A-Za-z_]\w*$/.test(s) ? `${i ? '.' : ''}${s}` : `[${JSON.stringify(s)}]`)).join('') ||
  '(example)';

function checkExample(id: string, example: unknown): void {
  const r = ExampleSchema.safeParse(example);
  if (r.success) return;
  const problems = r.error.issues.map((i) => `  - ${where(i.path)}: ${i.message}`).join('\n');
  throw new RedgreenError('USAGE', `the example of runner "${id}" cannot be scaffolded:\n${problems}`);
}

/** The starter `new --runner` makes: a built-in runner's own, or a registered one's example (null: it has none). */
export function templateFor(runner: RunnerId): Template | null {
  if (isBuiltinRunner(runner)) return TEMPLATES[runner];
  const example = CUSTOM.get(runner)?.example;
  return example ? { ...example, manifest: { ...example.manifest, runner } } : null;
}

export function adapterFor(runner: RunnerId): RunnerAdapter {
  if (isBuiltinRunner(runner)) return ADAPTERS[runner];
  const custom = CUSTOM.get(runner);
  if (!custom) throw new RedgreenError('MANIFEST_INVALID', `no adapter for runner "${runner}"`);
  return custom;
}
