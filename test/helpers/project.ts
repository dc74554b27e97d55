import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach } from 'vitest';
import { oracleProvider } from '../../harness/agents/static.js';
import type { PatchProvider } from '../../harness/pipeline/provider.js';
import { discoverFixtures } from '../../harness/fixtures/load.js';
import type { FixtureEvent } from '../../harness/pipeline/events.js';
import type { FixtureResult } from '../../harness/pipeline/result.js';
import { runFixtures } from '../../harness/pipeline/scheduler.js';
import { LocalBackend } from '../../harness/sandbox/host/local.js';
import type { SandboxBackend } from '../../harness/sandbox/core/types.js';
import type { SetupCache } from '../../harness/pipeline/setup-cache.js';
import { REPO } from './cli.js';

export interface InlineFixture {
  manifest: Record<string, unknown>;
  files: Record<string, string | Buffer>;
  /** The oracle's text; omitted means no oracle file. */
  oracle?: string;
  /** Raw fixture.json text, to write a broken manifest. */
  rawManifest?: string;
}

export interface Project {
  root: string;
  fixturesDir: string;
  oraclesDir: string;
  cleanup(): Promise<void>;
}

/** Writes inline fixtures into a temp project folder, the way a user's repository looks. */
export async function makeProject(fixtures: Record<string, InlineFixture>): Promise<Project> {
  const root = await mkdtemp(path.join(os.tmpdir(), 'rg-project-'));
  const fixturesDir = path.join(root, 'fixtures');
  const oraclesDir = path.join(root, 'oracles');
  await mkdir(oraclesDir, { recursive: true });
  for (const [id, f] of Object.entries(fixtures)) {
    const dir = path.join(fixturesDir, id);
    for (const [rel, content] of Object.entries({ 'ISSUE.md': `# ${id}\n`, ...f.files })) {
      await mkdir(path.dirname(path.join(dir, rel)), { recursive: true });
      await writeFile(path.join(dir, rel), content);
    }
    await writeFile(
      path.join(dir, 'fixture.json'),
      f.rawManifest ?? JSON.stringify({ id, title: id, language: 'python', ...f.manifest }, null, 2),
    );
    if (f.oracle !== undefined) await writeFile(path.join(oraclesDir, `${id}.patch`), f.oracle);
  }
  return { root, fixturesDir, oraclesDir, cleanup: () => rm(root, { recursive: true, force: true }) };
}

/**
 * makeProject for a test file whose tests may make several projects: all of a test's are removed
 * after it. Call at the top level of the file.
 */
export function useProjects(): (fixtures: Record<string, InlineFixture>) => Promise<Project> {
  const made: Project[] = [];
  afterEach(async () => {
    await Promise.all(made.splice(0).map((p) => p.cleanup()));
  });
  return async (fixtures) => {
    const p = await makeProject(fixtures);
    made.push(p);
    return p;
  };
}

/** Selfcheck through the real scheduler and local backend; returns results and every event. */
export async function selfcheckProject(
  p: Project,
  opts: { repeat?: number; signal?: AbortSignal; setupCache?: SetupCache; backend?: SandboxBackend } = {},
) {
  return runProject(p, { ...opts, mode: 'selfcheck', provider: oracleProvider });
}

/** Any mode and patch source through the real scheduler and local backend. */
export async function runProject(
  p: Project,
  opts: {
    mode: 'selfcheck' | 'run';
    provider: PatchProvider;
    repeat?: number;
    signal?: AbortSignal;
    baseline?: boolean;
    strict?: boolean;
    setupCache?: SetupCache;
    backend?: SandboxBackend;
  },
) {
  const { fixtures, broken } = await discoverFixtures(p);
  const events: { id: string; event: FixtureEvent }[] = [];
  const outcome = await runFixtures({
    fixtures,
    broken,
    backend: opts.backend ?? new LocalBackend(),
    setupCache: opts.setupCache ?? null,
    runId: 'test',
    mode: opts.mode,
    provider: opts.provider,
    baseline: opts.baseline ?? true,
    strict: opts.strict ?? false,
    retryBaseMs: 10,
    concurrency: 2,
    repeat: opts.repeat ?? 1,
    signal: opts.signal ?? new AbortController().signal,
    observer: { onEvent: (id, event) => events.push({ id, event }) },
  });
  const byId = Object.fromEntries(outcome.results.map((r) => [r.fixtureId, r])) as Record<string, FixtureResult>;
  return { ...outcome, byId, events };
}

/**
 * A pytest fixture. Plugins installed on the machine (hypothesis, benchmark …) are not loaded:
 * these fixtures need none, their outcome cannot depend on them, and pytest starts in a third of the time.
 */
export const PYTEST = {
  runner: 'pytest',
  test: { command: 'python3 -m pytest -q', timeoutSec: 30 },
  env: { PYTEST_DISABLE_PLUGIN_AUTOLOAD: '1' },
  protected: ['test_*.py'],
};

export const ADD_PY = 'def add(a, b):\n    return a - b\n';
export const ADD_TEST =
  'from calc import add\n\ndef test_add():\n    assert add(2, 3) == 5\n\ndef test_zero():\n    assert add(4, 0) == 4\n';

/**
 * A redgreen.config.mjs in `root` that registers the runner `lines` (with these tools), through
 * the built package's API as a user's config imports it.
 */
export async function configRegisteringLines(root: string, tools?: string[]): Promise<void> {
  const api = JSON.stringify(pathToFileURL(path.join(REPO, 'dist', 'api', 'index.js')).href);
  const adapter =
    `{ runner: 'lines', ${tools ? `tools: ${JSON.stringify(tools)}, ` : ''}infrastructure: [], prepare: (c) => ({ command: c.command, env: {} }), ` +
    "parse: () => ({ source: 'none', tests: [], counts: { passed: 0, failed: 0, skipped: 0, errors: 0, total: 0 } }) }";
  await writeFile(
    path.join(root, 'redgreen.config.mjs'),
    `import { defineConfig, registerRunner } from ${api};\nregisterRunner(${adapter});\nexport default defineConfig({});\n`,
  );
}

/**
 * A redgreen.config.mjs in `root` that registers the runner `tap-lines` (a line `ok <name>` or
 * `not ok <name>` per test) with an example `new` can scaffold; `files` replaces its buggy files.
 */
export async function configRegisteringTapLines(root: string, files?: Record<string, string>): Promise<void> {
  const api = JSON.stringify(pathToFileURL(path.join(REPO, 'dist', 'api', 'index.js')).href);
  const check =
    'rc=0\nt() { if [ "$(sh add.sh "$2" "$3")" = "$4" ]; then echo "ok $1"; else echo "not ok $1"; rc=1; fi; }\n' +
    't adds 2 3 5\nt zero 7 0 7\nexit $rc\n';
  const example = {
    language: 'shell',
    manifest: { test: { command: 'sh check.sh', timeoutSec: 60 }, protected: ['check.sh'] },
    files: files ?? { 'add.sh': 'echo $(( $1 - $2 ))\n', 'check.sh': check },
    fixed: { 'add.sh': 'echo $(( $1 + $2 ))\n' },
  };
  await writeFile(
    path.join(root, 'redgreen.config.mjs'),
    `import { countTests, defineConfig, registerRunner } from ${api};
registerRunner({
  runner: 'tap-lines',
  infrastructure: ['check.sh'],
  prepare: (ctx) => ({ command: ctx.command, env: ctx.env }),
  parse: ({ stdout }) => {
    const tests = [...stdout.matchAll(/^(not )?ok (\\S+)$/gm)].map((m) => ({ id: m[2], status: m[1] ? 'failed' : 'passed' }));
    return { source: 'stdout', tests, counts: countTests(tests) };
  },
  example: ${JSON.stringify(example)},
});
export default defineConfig({});
`,
  );
}
