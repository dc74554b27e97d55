import { execFile } from 'node:child_process';
import { z } from 'zod';
import { resolvePaths } from '../config/paths.js';
import { scanFixtures } from '../fixtures/load.js';
import { isBuiltinRunner, type Runner, type RunnerId } from '../fixtures/manifest.js';
import { BACKENDS } from '../sandbox/backends.js';
import { PathOptionsSchema } from './options.js';

export const DoctorOptionsSchema = PathOptionsSchema.extend({ json: z.boolean().default(false) });
export type DoctorOptions = z.infer<typeof DoctorOptionsSchema>;

interface Tool {
  name: string;
  /** Prints the version, or fails when the tool is missing or unusable. */
  check: readonly string[];
  fix: string;
  /** Runners that need it (every fixture needs the tools with none: git, node). */
  runners?: readonly Runner[];
}

/** Runners installed from npm in a fixture's setup and started through npx. */
const NPM_RUNNERS: readonly Runner[] = ['vitest', 'jest', 'mocha', 'ava', 'tap', 'uvu'];

const TOOLS: readonly Tool[] = [
  { name: 'git', check: ['git', '--version'], fix: 'apt-get install -y git (patches are applied with git apply)' },
  {
    name: 'python3 + pytest',
    check: ['python3', '-c', 'import pytest; print("pytest", pytest.__version__)'],
    fix: 'apt-get install -y python3-pytest (or pip install pytest)',
    runners: ['pytest'],
  },
  { name: 'python3', check: ['python3', '--version'], fix: 'apt-get install -y python3', runners: ['unittest'] },
  {
    name: 'npm',
    check: ['npm', '--version'],
    fix: 'install Node.js with npm (vitest, jest, mocha, ava, tap and uvu fixtures install their runner in setup)',
    runners: NPM_RUNNERS,
  },
  {
    name: 'npx',
    check: ['npx', '--version'],
    fix: 'install Node.js with npm (npx comes with it; the test commands run `npx <runner>`)',
    runners: NPM_RUNNERS,
  },
  { name: 'go', check: ['go', 'version'], fix: 'apt-get install -y golang-go', runners: ['go'] },
  { name: 'cargo', check: ['cargo', '--version'], fix: 'apt-get install -y cargo (or rustup)', runners: ['cargo'] },
];

interface Finding {
  name: string;
  ok: boolean;
  detail: string;
  fix?: string;
  /** Why this matters here: the fixtures that need it. */
  neededBy?: string[];
}

/**
 * What this machine has for redgreen: the tools the fixtures' runners need (marked when a fixture
 * here needs them) and every backend's probe, each with how to get what is missing. Exit 1 when
 * something a fixture here needs is missing, else 0; a backend that is not set up is only listed.
 */
export async function doctor(options: DoctorOptions): Promise<number> {
  const paths = resolvePaths(options);
  // Manifests only: what runners the fixtures need, without checking out any tree by reference.
  const { fixtures } = await scanFixtures(paths, []).catch(() => ({ fixtures: [] }));
  const byRunner = new Map<string, string[]>();
  for (const f of fixtures) byRunner.set(f.manifest.runner, [...(byRunner.get(f.manifest.runner) ?? []), f.id]);

  const node = nodeFinding(fixtures.map((f) => f.id));
  const tools = await Promise.all(
    TOOLS.map(async (t): Promise<Finding> => {
      const neededBy = t.runners ? t.runners.flatMap((r) => byRunner.get(r) ?? []) : fixtures.map((f) => f.id);
      const out = await version(t.check);
      return { name: t.name, ok: out.ok, detail: out.text, ...(out.ok ? {} : { fix: t.fix }), ...(neededBy.length ? { neededBy } : {}) };
    }),
  );
  tools.push(...(await registeredTools(byRunner)));
  const ctx = { passEnv: [], cacheDir: paths.cacheDir };
  const backends = await Promise.all(
    BACKENDS.map(async (b): Promise<Finding> => {
      const p = await b.probe(b.options.parse({}), ctx).catch((e: Error) => ({ ok: false as const, reason: e.message, fix: '' }));
      return p.ok
        ? { name: b.name, ok: true, detail: p.detail ?? b.summary }
        : { name: b.name, ok: false, detail: p.reason, ...(p.fix ? { fix: p.fix } : {}) };
    }),
  );
  const missing = [node, ...tools].filter((t) => !t.ok && t.neededBy?.length);
  if (options.json) {
    process.stdout.write(`${JSON.stringify({ tools: [node, ...tools], backends, missing: missing.map((m) => m.name) }, null, 2)}\n`);
  } else {
    process.stdout.write(`tools (for ${fixtures.length} fixture(s) in ${paths.fixturesDir})\n`);
    for (const t of [node, ...tools]) process.stdout.write(line(t));
    process.stdout.write('backends\n');
    for (const b of backends) process.stdout.write(line(b));
    process.stdout.write(
      missing.length
        ? `missing for the fixtures here: ${missing.map((m) => m.name).join(', ')}\n`
        : 'everything the fixtures here need is present\n',
    );
  }
  return missing.length ? 1 : 0;
}

/**
 * The programs runners registered from user code (a config's registerRunner) say they need (their
 * adapter's `tools`), for the fixtures that use them: present when the shell finds them on PATH.
 */
async function registeredTools(byRunner: ReadonlyMap<string, string[]>): Promise<Finding[]> {
  const custom = [...byRunner].filter(([runner]) => !isBuiltinRunner(runner));
  if (!custom.length) return [];
  const { adapterFor } = await import('../results/index.js');
  const needs = new Map<string, { runners: string[]; ids: string[] }>();
  for (const [runner, ids] of custom) {
    for (const tool of adapterFor(runner as RunnerId).tools ?? []) {
      const n = needs.get(tool) ?? needs.set(tool, { runners: [], ids: [] }).get(tool)!;
      n.runners.push(runner);
      n.ids.push(...ids);
    }
  }
  return Promise.all(
    [...needs].map(async ([tool, n]): Promise<Finding> => {
      const found = await version(['sh', '-c', 'command -v "$1"', 'sh', tool]);
      const by = `the ${n.runners.join(', ')} runner${n.runners.length > 1 ? 's' : ''} registered in your config`;
      return found.ok
        ? { name: tool, ok: true, detail: `${found.text} (for ${by})`, neededBy: n.ids }
        : {
            name: tool,
            ok: false,
            detail: `${tool} not found on PATH`,
            fix: `install ${tool}: ${by} run${n.runners.length > 1 ? '' : 's'} it`,
            neededBy: n.ids,
          };
    }),
  );
}

function line(f: Finding): string {
  const needed = f.neededBy?.length
    ? `  (needed by ${f.neededBy.length} fixture(s): ${f.neededBy.slice(0, 3).join(', ')}${f.neededBy.length > 3 ? ', …' : ''})`
    : '';
  const fix = f.ok || !f.fix ? '' : `\n      → ${f.fix}`;
  return `  ${f.ok ? '✔' : '✘'} ${f.name.padEnd(18)} ${f.detail}${needed}${fix}\n`;
}

/** Node runs redgreen itself and node:test fixtures; package.json asks for >= 20.19. */
function nodeFinding(ids: string[]): Finding {
  const [major = 0, minor = 0] = process.versions.node.split('.').map(Number);
  const ok = major > 20 || (major === 20 && minor >= 19);
  return {
    name: 'node',
    ok,
    detail: `v${process.versions.node}${ok ? '' : ' (redgreen needs >= 20.19)'}`,
    ...(ok ? {} : { fix: 'install Node.js 20.19 or newer' }),
    ...(ids.length ? { neededBy: ids } : {}),
  };
}

/** The first line a version command prints, or why it could not run. */
function version(argv: readonly string[]): Promise<{ ok: boolean; text: string }> {
  return new Promise((resolve) => {
    execFile(
      argv[0]!,
      argv.slice(1),
      { timeout: 30_000, env: { ...process.env, PYTEST_DISABLE_PLUGIN_AUTOLOAD: '1' } },
      (err, stdout, stderr) => {
        const first = (s: string) => s.trim().split('\n')[0] ?? '';
        if (!err) return resolve({ ok: true, text: first(stdout) || first(stderr) });
        const code = (err as NodeJS.ErrnoException).code;
        resolve({ ok: false, text: code === 'ENOENT' ? `${argv[0]} not found` : first(stderr) || err.message });
      },
    );
  });
}
