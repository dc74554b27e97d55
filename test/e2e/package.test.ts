import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { ReportSchema } from '../../harness/reporters/report.js';
import { REPO } from '../helpers/cli.js';

const exec = promisify(execFile);
let dir = '';
let project = '';

/** A command in the temp project, as its user types it; output and exit code, never a throw. */
async function sh(file: string, args: string[], env: Record<string, string> = {}) {
  try {
    const r = await exec(file, args, { cwd: project, env: { ...process.env, CI: 'true', ...env }, maxBuffer: 64 << 20 });
    return { code: 0, stdout: r.stdout, stderr: r.stderr };
  } catch (e) {
    const r = e as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof r.code === 'number' ? r.code : -1, stdout: r.stdout ?? '', stderr: r.stderr ?? '' };
  }
}
const redgreen = (...args: string[]) => sh('npx', ['--no', 'redgreen', ...args]);
const tsc = path.join(REPO, 'node_modules/typescript/bin/tsc');

/**
 * redgreen as another project gets it: `npm pack` (what would be published), installed as a
 * devDependency of a fresh project (its dependencies from the npm registry, through npm's cache).
 */
beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'rg-package-'));
  const packed = await exec('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', dir], { cwd: REPO, maxBuffer: 64 << 20 });
  const tarball = path.join(dir, (JSON.parse(packed.stdout) as { filename: string }[])[0]!.filename);
  project = path.join(dir, 'project');
  await mkdir(project);
  await writeFile(path.join(project, 'package.json'), JSON.stringify({ name: 'uses-redgreen', private: true, type: 'module' }));
  const installed = await sh('npm', ['install', '--save-dev', '--prefer-offline', '--no-audit', '--no-fund', tarball]);
  if (installed.code !== 0) throw new Error(`npm install of the packed tarball failed:\n${installed.stderr}`);
}, 300_000);
afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('the packed package in another project', () => {
  test('npx redgreen init && npx redgreen selfcheck passes; the init files make the README examples run as written', async () => {
    const none = await redgreen('selfcheck');
    expect(none.code).toBe(2);
    expect(none.stderr).toContain(`no fixtures folder at ${path.join(project, 'fixtures')}`);
    expect(none.stderr).toContain('npx redgreen init');

    const init = await redgreen('init');
    expect(init.code).toBe(0);
    for (const f of [
      'fixtures/js_cart_total/fixture.json',
      'oracles/my_first_bug.patch',
      'examples/predictions.jsonl',
      'examples/agent.mjs',
      'redgreen.config.json',
    ])
      expect(existsSync(path.join(project, f)), f).toBe(true);
    const check = await redgreen('selfcheck');
    expect(check.stderr).not.toContain('redgreen:');
    expect(check.code).toBe(0);
    expect(check.stdout).toContain('valid: 2/2 of all fixtures');

    const patches = await redgreen('run', '--patches', 'examples/predictions.jsonl', '--json');
    const graded = ReportSchema.parse(JSON.parse(patches.stdout));
    expect(graded.fixtures.map((f) => [f.fixtureId, f.verdict])).toEqual([
      ['js_cart_total', 'resolved'],
      ['my_first_bug', 'unresolved'],
    ]);
    expect(patches.code).toBe(1);
    const agent = await redgreen('run', '--agent', `node ${path.join(project, 'examples/agent.mjs')}`, '--json');
    expect(ReportSchema.parse(JSON.parse(agent.stdout)).fixtures.map((f) => f.verdict)).toEqual(['resolved', 'unresolved']);
    // A second init keeps what is there.
    expect((await redgreen('init')).stdout).toContain('kept fixtures/js_cart_total (already there)');
  });

  test('a TypeScript file importing selfcheck, run and defineConfig type-checks under --strict, and runs with the config it finds', async () => {
    await rm(path.join(project, 'redgreen.config.json'), { force: true });
    await writeFile(
      path.join(project, 'redgreen.config.mjs'),
      `import { defineConfig } from 'redgreen';\nexport default defineConfig({ concurrency: 1, reporter: ['junit=out/junit.xml'] });\n`,
    );
    await writeFile(
      path.join(project, 'bench.ts'),
      `import { defineConfig, run, selfcheck, RedgreenError, type ProgressEvent, type Report } from 'redgreen';

export const config = defineConfig({ backend: 'local', concurrency: 2, passEnv: ['HOME'], agentTimeout: 60, reporter: ['md'] });

function typos(): void {
  // @ts-expect-error: a misspelt option is a type error
  void selfcheck({ concurency: 2 });
  // @ts-expect-error: so is a value of the wrong kind
  void run({ agent: 'nop', strict: 'yes' });
}
void typos;

const phases: string[] = [];
const controller = new AbortController();
const report: Report = await selfcheck({
  ids: ['js_*'],
  signal: controller.signal,
  onProgress: (e: ProgressEvent) => {
    if (e.type === 'fixture-event' && e.event.type === 'phase' && e.event.status === 'start') phases.push(e.event.phase);
  },
});
const runs: Report[] = await run({ patches: 'examples/predictions.jsonl' });
let refused = '';
try {
  await selfcheck({ ids: ['no_such_*'] });
} catch (e) {
  if (e instanceof RedgreenError) refused = e.code;
}
console.log(JSON.stringify({ expected: report.summary.expected, concurrency: report.concurrency, phases, resolved: runs.map((r) => r.summary.expected), refused }));
`,
    );
    await writeFile(
      path.join(project, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          strict: true,
          module: 'nodenext',
          moduleResolution: 'nodenext',
          target: 'es2022',
          outDir: 'out',
          // Our declarations are checked too: the package must type-check as shipped.
          skipLibCheck: false,
          types: ['node'],
          typeRoots: [path.join(REPO, 'node_modules/@types')],
        },
        files: ['bench.ts'],
      }),
    );
    const typed = await sh(process.execPath, [tsc, '-p', 'tsconfig.json']);
    expect(typed.stdout + typed.stderr).toBe('');
    expect(typed.code).toBe(0);
    const ran = await sh(process.execPath, ['out/bench.js']);
    expect(ran.stderr).toBe('');
    expect(JSON.parse(ran.stdout)).toMatchObject({ expected: 1, concurrency: 1, resolved: [1], refused: 'FIXTURE_NOT_FOUND' });
    // Each phase once, in order (keeping a prepared workspace is part of setup, not a second setup).
    expect(JSON.parse(ran.stdout).phases).toEqual(['create', 'upload', 'setup', 'red', 'patch', 'green', 'destroy']);
    // The config's reporter wrote the JUnit file where it said.
    expect(readFileSync(path.join(project, 'out/junit.xml'), 'utf8')).toContain('<testsuites');
  });

  test('a CommonJS project can require() it (Node 20.19+ loads the ES module)', async () => {
    await writeFile(
      path.join(project, 'uses.cjs'),
      `const { selfcheck, defineConfig } = require('redgreen');
selfcheck({ ...defineConfig({ concurrency: 1 }), ids: ['my_first_bug'] }).then(
  (r) => console.log(r.fixtures.map((f) => f.fixtureId + ' ' + f.verdict).join()),
  (e) => { console.error(e); process.exitCode = 1; },
);
`,
    );
    const ran = await sh(process.execPath, ['uses.cjs']);
    expect(ran.stderr).toBe('');
    expect(ran.stdout.trim()).toBe('my_first_bug valid');
  });

  test('the package holds what the README calls bundled and the schemas reports and manifests point at', async () => {
    const pkg = path.join(project, 'node_modules/redgreen');
    expect((await readdir(path.join(pkg, 'fixtures'))).sort()).toEqual(
      (await readdir(path.join(REPO, 'fixtures'))).filter((f) => !f.startsWith('.')).sort(),
    );
    expect((await readdir(path.join(pkg, 'oracles'))).length).toBe((await readdir(path.join(REPO, 'oracles'))).length);
    const schema = JSON.parse(readFileSync(path.join(pkg, 'report.schema.json'), 'utf8')) as { properties: Record<string, unknown> };
    expect(Object.keys(schema.properties)).toEqual(expect.arrayContaining(Object.keys(ReportSchema.shape)));
    expect(existsSync(path.join(pkg, 'fixture.schema.json'))).toBe(true);
    expect(existsSync(path.join(pkg, 'dist/api/index.d.ts'))).toBe(true);
  });
});
