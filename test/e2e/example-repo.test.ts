import { execFile } from 'node:child_process';
import { cp, mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { REPO, runCli } from '../helpers/cli.js';
import { isolatedCache } from '../helpers/git-repos.js';

// The README's examples for real repositories, as written, on what examples/ ships: the clamp
// project's bundle and its fix as a SWE-bench instance (examples/make-clamp.sh makes both).

let project = '';
let env: Record<string, string> = {};
const cli = (...args: string[]) => runCli(args, { cwd: project, env });

beforeAll(async () => {
  project = await mkdtemp(path.join(os.tmpdir(), 'rg-example-repo-'));
  env = { XDG_CACHE_HOME: await isolatedCache(project) };
  await cp(path.join(REPO, 'examples'), path.join(project, 'examples'), { recursive: true });
  await promisify(execFile)('git', ['clone', '-q', 'examples/clamp.bundle', 'clones/example__clamp'], { cwd: project });
});
afterAll(async () => {
  if (project) await rm(project, { recursive: true, force: true });
});

test('new --from-commit HEAD, mine, import swe-bench, selfcheck and export swe-bench run as the README writes them', async () => {
  const made = await cli('new', 'clamp_fix', '--from-commit', 'HEAD', '--repo', 'clones/example__clamp');
  expect(made.code, made.stderr).toBe(0);
  expect(made.stderr).toContain('created fixtures/clamp_fix/ and oracles/clamp_fix.patch: valid (1 failToPass, 2 passToPass)');

  const mined = await cli('mine', 'clones/example__clamp', '--since', '2024-01-01');
  expect(mined.code, mined.stderr).toBe(0);
  // The fix is clamp_fix already (by its commit, whatever its id): listed as such, not made twice.
  expect(mined.stdout).toContain('clones/example__clamp: 3 commit(s), 0 fixture(s) kept');
  expect(mined.stdout).toMatch(/already a fixture: clamp_fix/);
  expect(mined.stdout).toMatch(/changes no test file \(README\.md\)/);

  const imported = await cli('import', 'swe-bench', 'examples/swe-bench.jsonl', '--repos', 'clones');
  expect(imported.code, imported.stderr).toBe(0);
  const checked = await cli('selfcheck', 'example__clamp-3', '--json');
  expect(checked.code, checked.stderr).toBe(0);
  const report = JSON.parse(checked.stdout) as { fixtures: { verdict: string }[] };
  expect(report.fixtures.map((f) => f.verdict)).toEqual(['valid']);

  const exported = await cli('export', 'swe-bench', '--out', 'exported.jsonl', '--repos', 'clones');
  expect(exported.code, exported.stderr).toBe(0);
  expect(exported.stderr).toContain('2 instance(s) written to exported.jsonl');
  const given = JSON.parse(await readFile(path.join(project, 'examples/swe-bench.jsonl'), 'utf8')) as Record<string, unknown>;
  const back = (await readFile(path.join(project, 'exported.jsonl'), 'utf8'))
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, unknown>)
    .find((i) => i.instance_id === given.instance_id);
  expect(back).toEqual(given);
});

test('export swe-bench --spec writes what an import needs to read every fixture back as it runs here, a runner no project shows too', async () => {
  expect((await cli('new', 'plain', '--runner', 'exit-code')).code).toBe(0);
  expect((await cli('selfcheck', 'plain', '--write')).code).toBe(0);
  const exported = await cli(
    'export',
    'swe-bench',
    'plain',
    'clamp_fix',
    '--out',
    'both.jsonl',
    '--repos',
    'clones',
    '--spec',
    'specs.json',
  );
  expect(exported.code, exported.stderr).toBe(0);
  expect(exported.stderr).toContain('the spec to import them back with: specs.json (--spec specs.json)');
  const specs = JSON.parse(await readFile(path.join(project, 'specs.json'), 'utf8')) as Record<string, { runner: string }>;
  expect(Object.fromEntries(Object.entries(specs).map(([repo, s]) => [repo, s.runner]))).toEqual({
    'local/plain': 'exit-code',
    'local/clamp_fix': 'node-test',
  });

  const elsewhere = await mkdtemp(path.join(os.tmpdir(), 'rg-example-import-'));
  try {
    const at = (...args: string[]) => runCli(args, { cwd: elsewhere, env });
    const both = path.join(project, 'both.jsonl');
    const clones = path.join(project, 'clones');
    // Without the spec, a project whose files name no runner cannot be imported; with it, both are, and run as they did.
    const guessed = await at('import', 'swe-bench', both, '--repos', clones);
    expect(guessed.code).toBe(2);
    expect(guessed.stderr).toMatch(/\(plain\): instance_invalid: no spec for local\/plain and no test runner found/);
    await rm(path.join(elsewhere, 'fixtures'), { recursive: true, force: true });
    await rm(path.join(elsewhere, 'oracles'), { recursive: true, force: true });
    const imported = await at('import', 'swe-bench', both, '--repos', clones, '--spec', path.join(project, 'specs.json'));
    expect(imported.code, imported.stderr).toBe(0);
    const checked = await at('selfcheck', '--json');
    expect(checked.code, checked.stderr).toBe(0);
    const report = JSON.parse(checked.stdout) as { fixtures: { fixtureId: string; runner: string; verdict: string }[] };
    expect(report.fixtures.map((f) => [f.fixtureId, f.runner, f.verdict])).toEqual([
      ['clamp_fix', 'node-test', 'valid'],
      ['plain', 'exit-code', 'valid'],
    ]);
  } finally {
    await rm(elsewhere, { recursive: true, force: true });
  }
});
