import { spawnSync } from 'node:child_process';
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { REPO, runCli } from '../helpers/cli.js';
import { isolatedCache } from '../helpers/git-repos.js';
import { makeSweBenchRepos } from '../helpers/swebench-repos.js';

// Three hand-written SWE-bench instances (test/data/swe-bench) pointing at repositories built in
// a temp folder: import, selfcheck valid, export back with the same field values, predictions
// keyed by the exported ids graded by `run --patches`, and the same fixtures as Harbor tasks.

const DATA = path.join(REPO, 'test', 'data', 'swe-bench');
const INSTANCES = path.join(DATA, 'instances.jsonl');

let base = '';
let root = '';
let repos = '';
let env: Record<string, string> = {};
beforeAll(async () => {
  base = await mkdtemp(path.join(os.tmpdir(), 'rg-swe-bench-'));
  env = { XDG_CACHE_HOME: await isolatedCache(base) };
  repos = path.join(base, 'repos');
  await makeSweBenchRepos(repos);
  root = path.join(base, 'project');
});
afterAll(async () => {
  await rm(base, { recursive: true, force: true });
});

const lines = async (file: string) =>
  (await readFile(file, 'utf8'))
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>);

describe('SWE-bench instances', () => {
  test('import, selfcheck valid, export with the same field values, predictions round-trip', async () => {
    const imported = await runCli(
      ['import', 'swe-bench', INSTANCES, '--repos', repos, '--spec', path.join(DATA, 'specs.json'), '--root', root],
      { env },
    );
    expect(imported.code, imported.stderr).toBe(0);
    expect(imported.stdout).toContain('3 instance(s) imported');
    expect(imported.stderr).toContain(
      'acme__textkit-15: pytest, `python3 -m pytest -q -p no:cacheprovider tests` (spec for acme/textkit (version 1.1))',
    );
    expect(imported.stderr).toMatch(/acme__ledger-3: unittest, `python3 -m unittest -v` \(detected: /);
    expect(imported.stderr).toContain('test_rounding (test_money.TestCents) → test_money.TestCents.test_rounding');
    const manifest = JSON.parse(await readFile(path.join(root, 'fixtures', 'acme__ledger-3', 'fixture.json'), 'utf8')) as Record<
      string,
      any
    >;
    expect(manifest.source).toEqual({
      repo: path.join(repos, 'acme__ledger'),
      commit: 'cea0095a57f0eb00463720e094ca733f113540cf',
      testPatch: 'test.patch',
    });
    expect(manifest.tests).toEqual({ failToPass: ['test_money.TestCents.test_rounding'], passToPass: ['test_money.TestCents.test_whole'] });

    const check = await runCli(['selfcheck', '--root', root, '--json'], { env });
    expect(check.code, check.stderr).toBe(0);
    const report = JSON.parse(check.stdout) as { fixtures: { fixtureId: string; verdict: string; reason: string }[] };
    expect(Object.fromEntries(report.fixtures.map((f) => [f.fixtureId, f.verdict]))).toEqual({
      'acme__ledger-3': 'valid',
      'acme__textkit-12': 'valid',
      'acme__textkit-15': 'valid',
    });

    const out = path.join(base, 'exported.jsonl');
    const exported = await runCli(['export', 'swe-bench', '--root', root, '--out', out], { env });
    expect(exported.code, exported.stderr).toBe(0);
    const original = await lines(INSTANCES);
    const back = new Map((await lines(out)).map((i) => [i.instance_id, i]));
    for (const inst of original) {
      const again = back.get(inst.instance_id)!;
      expect(again, String(inst.instance_id)).toEqual(inst);
      expect(Object.keys(again)).toEqual(Object.keys(inst));
    }

    // Predictions keyed by the exported instance ids: the gold patches resolve, the empty ones do not.
    const preds = path.join(base, 'preds.jsonl');
    const rows = [...back.values()].flatMap((i) => [
      { instance_id: i.instance_id, model_name_or_path: 'gold', model_patch: i.patch },
      { instance_id: i.instance_id, model_name_or_path: 'empty', model_patch: '' },
    ]);
    await writeFile(preds, rows.map((r) => JSON.stringify(r)).join('\n'));
    const graded = await runCli(['run', '--root', root, '--patches', preds, '--json'], { env });
    expect(graded.code, graded.stderr).toBe(1);
    const runs = (JSON.parse(graded.stdout) as { runs: { subject: string; fixtures: { fixtureId: string; verdict: string }[] }[] }).runs;
    const verdicts = Object.fromEntries(runs.map((r) => [r.subject, r.fixtures.map((f) => f.verdict)]));
    expect(verdicts).toEqual({ gold: ['resolved', 'resolved', 'resolved'], empty: ['unresolved', 'unresolved', 'unresolved'] });
  });

  test('a broken instance is reported with where it is and why; the others are imported', async () => {
    const [good, second] = await lines(INSTANCES);
    const { FAIL_TO_PASS: _f, patch: _p, ...missing } = second!;
    const file = path.join(base, 'mixed.jsonl');
    const unknownCommit = { ...good, instance_id: 'acme__textkit-99', base_commit: 'deadbeef'.repeat(5) };
    await writeFile(file, [JSON.stringify(good), JSON.stringify(missing), '{ not json', JSON.stringify(unknownCommit)].join('\n'));
    const project = path.join(base, 'mixed');
    const r = await runCli(['import', 'swe-bench', file, '--repos', repos, '--root', project], { env });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(
      /✘ mixed\.jsonl:2: instance_invalid: not a SWE-bench instance: field "patch": missing; field "FAIL_TO_PASS": missing/,
    );
    expect(r.stderr).toMatch(/✘ mixed\.jsonl:3: instance_invalid: not valid JSON/);
    expect(r.stderr).toMatch(/✘ mixed\.jsonl:4 \(acme__textkit-99\): commit_not_found: .*has no commit deadbeef/);
    expect(r.stderr).not.toMatch(/\n\s+at /);
    expect(r.stdout).toContain('1 instance(s) imported, 3 not (see above)');
    // Without a spec, the runner is detected: pytest.ini.
    expect(r.stderr).toMatch(/✔ acme__textkit-12: pytest, `python3 -m pytest -q` \(detected: pytest.ini configures pytest/);
  });

  test('a folder fixture exports as a repository of its own (the same sha twice) and imports back valid', async () => {
    const a = path.join(base, 'folder-a');
    expect((await runCli(['new', 'calc_bug', '--runner', 'pytest', '--root', a], { env })).code).toBe(0);
    expect((await runCli(['selfcheck', '--root', a, '--write'], { env })).code).toBe(0);
    const clones = path.join(base, 'clones');
    const out = path.join(base, 'folder.jsonl');
    const exported = await runCli(['export', 'swe-bench', '--root', a, '--out', out, '--repos', clones], { env });
    expect(exported.code, exported.stderr).toBe(0);
    const [inst] = await lines(out);
    expect(inst).toMatchObject({
      repo: 'local/calc_bug',
      instance_id: 'calc_bug',
      test_patch: '',
      FAIL_TO_PASS: '["test_calc.py::test_add"]',
    });
    // Fixtures are named as every command names them: a glob, or the fixture's folder.
    for (const named of ['calc*', path.join(a, 'fixtures', 'calc_bug')]) {
      const again = await runCli(['export', 'swe-bench', named, '--root', a, '--out', out, '--repos', clones], { env });
      expect(again.code, again.stderr).toBe(0);
      expect((await lines(out))[0]!.base_commit).toBe(inst!.base_commit);
    }
    const none = await runCli(['export', 'swe-bench', 'nothing*', '--root', a, '--repos', clones], { env });
    expect(none.code).not.toBe(0);
    expect(none.stderr).toContain('no fixture matches "nothing*"');
    const b = path.join(base, 'folder-b');
    const imported = await runCli(['import', 'swe-bench', out, '--repos', clones, '--root', b], { env });
    expect(imported.code, imported.stderr).toBe(0);
    const check = await runCli(['selfcheck', '--root', b, '--json'], { env });
    expect(check.code, check.stderr).toBe(0);
    expect((JSON.parse(check.stdout) as { fixtures: { verdict: string }[] }).fixtures.map((f) => f.verdict)).toEqual(['valid']);
    // Without --repos, a folder fixture cannot be an instance: said, not crashed.
    const refused = await runCli(['export', 'swe-bench', '--root', a], { env });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/✘ calc_bug: calc_bug holds its files: give --repos <dir>/);
  });
});

describe('Harbor tasks', () => {
  const bash = spawnSync('bash', ['--version']).status === 0;
  test.skipIf(!bash)('tests/test.sh writes reward 0 for the bug and for tampered tests, 1 after solution/solve.sh', async () => {
    const project = path.join(base, 'harbor-project');
    expect((await runCli(['import', 'swe-bench', INSTANCES, '--repos', repos, '--root', project], { env })).code).toBe(0);
    const out = path.join(base, 'harbor');
    const r = await runCli(['export', 'harbor', 'acme__textkit-12', '--root', project, '--out', out], { env });
    expect(r.code, r.stderr).toBe(0);
    const task = path.join(out, 'acme__textkit-12');
    expect(await readFile(path.join(task, 'task.toml'), 'utf8')).toMatch(
      /^schema_version = "1\.3"\n\n\[task\]\nname = "redgreen\/acme__textkit-12"\n[^]*\[metadata\]\n[^]*\[verifier\]\ntimeout_sec = 420\n/,
    );
    expect(await readFile(path.join(task, 'instruction.md'), 'utf8')).toMatch(/^slugify\(\) leaves double dashes\n/);
    expect(await readFile(path.join(task, 'environment', 'Dockerfile'), 'utf8')).toMatch(
      /^FROM python:3\.12-slim-bookworm\n[^]*COPY app\/ \/app\/\n/,
    );

    // Harbor's steps, here: the image's /app is environment/app; the verifier writes to logs/.
    const app = path.join(base, 'app');
    const logs = path.join(base, 'logs');
    await cp(path.join(task, 'environment', 'app'), app, { recursive: true });
    const run = (script: string) =>
      spawnSync('bash', [path.join(task, script)], {
        env: { ...process.env, REDGREEN_APP_DIR: app, REDGREEN_LOGS_DIR: logs },
        encoding: 'utf8',
      });
    const reward = async () => (await readFile(path.join(logs, 'reward.txt'), 'utf8')).trim();
    expect(run('tests/test.sh').status).toBe(0);
    expect(await reward()).toBe('0');
    // An agent that rewrites the failing test does not get the reward: the test comes back.
    await writeFile(path.join(app, 'tests', 'test_textkit.py'), 'def test_nothing():\n    pass\n');
    run('tests/test.sh');
    expect(await reward()).toBe('0');
    expect(run('solution/solve.sh').status).toBe(0);
    run('tests/test.sh');
    expect(await reward()).toBe('1');
  });
});
