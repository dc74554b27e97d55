import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { JS_REPOS, NATIVE_REPOS, PY_REPOS, type RunnerRepo } from '../helpers/fix-repos.js';
import { isolatedCache, makeGitRepo, sharedNpmCache } from '../helpers/git-repos.js';
import { hasToolchain } from '../helpers/toolchains.js';

// `redgreen new <id> --from-commit <sha> --repo <path>` through the built CLI, for every runner
// redgreen detects: a git repository in a temp folder with a history ending in a real-looking fix,
// one command, and the fixture selfcheck calls valid, with the test lists it must record.

let base = '';
let xdg = '';
beforeAll(async () => {
  base = await mkdtemp(path.join(os.tmpdir(), 'rg-from-commit-'));
  xdg = await isolatedCache(base);
  // The npm runners come from the registry once, into the download cache the fixtures' own setup
  // (npm install, detected) reads, so each test installs from it.
  const pins = JS_REPOS.flatMap((r) =>
    Object.entries(JSON.parse(r.history[0]!.files['package.json']!).devDependencies ?? {}).map(([n, v]) => `${n}@${v}`),
  );
  const warm = path.join(base, 'warm');
  await mkdir(warm);
  await writeFile(path.join(warm, 'package.json'), '{ "private": true }\n');
  await promisify(execFile)('npm', ['install', '--no-audit', '--no-fund', '--loglevel=error', ...pins], {
    cwd: warm,
    env: { ...process.env, npm_config_cache: sharedNpmCache() },
  });
  await rm(warm, { recursive: true, force: true });
}, 300_000);
afterAll(async () => {
  await rm(base, { recursive: true, force: true });
});

const sorted = (ids: string[]) => [...ids].sort();

async function fromCommit(r: RunnerRepo) {
  const repo = path.join(base, 'repos', r.runner);
  const shas = await makeGitRepo(repo, r.history);
  const root = path.join(base, `project-${r.runner}`);
  const id = `clamp_${r.runner.replace('-', '_')}`;
  const env = { XDG_CACHE_HOME: xdg };
  const made = await runCli(['new', id, '--from-commit', shas.at(-1)!, '--repo', repo, '--root', root], { env });
  expect(made.stderr, made.stdout).toContain(`runner: ${r.runner}`);
  expect(made.code, `${made.stdout}\n${made.stderr}`).toBe(0);
  expect(made.stderr).toMatch(/because /);
  expect(made.stderr).toMatch(
    new RegExp(`created \\S*fixtures/${id}/ and \\S*oracles/${id}\\.patch: valid \\(1 failToPass, 2 passToPass\\)`),
  );
  const manifest = JSON.parse(await readFile(path.join(root, 'fixtures', id, 'fixture.json'), 'utf8')) as Record<string, any>;
  expect(manifest.runner).toBe(r.runner);
  expect({ failToPass: sorted(manifest.tests.failToPass), passToPass: sorted(manifest.tests.passToPass) }).toEqual({
    failToPass: sorted(r.failToPass),
    passToPass: sorted(r.passToPass),
  });
  expect(manifest.origin).toMatchObject({ kind: 'commit', commit: shas.at(-1), parent: shas.at(-2) });
  expect(await readFile(path.join(root, 'fixtures', id, 'ISSUE.md'), 'utf8')).toMatch(
    /^# Fix clamp\(\) ignoring the upper bound\n\nclamp\(15, 0, 10\) returned 15/,
  );
  const oracle = await readFile(path.join(root, 'oracles', `${id}.patch`), 'utf8');
  expect([...oracle.matchAll(/^diff --git a\/(\S+)/gm)].map((m) => m[1])).toHaveLength(1);
  // The fixture stands on its own: a plain selfcheck in the project says valid.
  const check = await runCli(['selfcheck', '--root', root, '--json'], { env });
  expect(check.code, check.stderr).toBe(0);
  const report = JSON.parse(check.stdout) as { fixtures: { fixtureId: string; verdict: string }[] };
  expect(report.fixtures.map((f) => [f.fixtureId, f.verdict])).toEqual([[id, 'valid']]);
}

// Each installs its runner from npm, then selfchecks twice: a minute each on a busy 2-core machine.
describe('new --from-commit: JavaScript runners', () => {
  for (const r of JS_REPOS) test(r.runner, { timeout: 300_000 }, () => fromCommit(r));
});

describe('new --from-commit: Python runners', () => {
  for (const r of PY_REPOS) test(r.runner, () => fromCommit(r));
});

describe('new --from-commit: go and cargo', () => {
  for (const r of NATIVE_REPOS) test.skipIf(!hasToolchain(r.runner))(r.runner, () => fromCommit(r));
});

// A project whose detected setup cannot run here (a requirement that is not there): the user gives
// the setup instead, or none. The same flags on `mine` apply to every candidate.
describe('the setup instead of the detected one: --setup, --no-setup', () => {
  const pytest = PY_REPOS.find((r) => r.runner === 'pytest')!;
  const history = pytest.history.map((c, i) =>
    i === 0 ? { ...c, files: { ...c.files, 'requirements.txt': './vendor/clampdeps-1.0-py3-none-any.whl\n' } } : c,
  );
  let repo = '';
  let sha = '';
  const env = () => ({ XDG_CACHE_HOME: xdg });
  beforeAll(async () => {
    repo = path.join(base, 'repos', 'needs-setup');
    sha = (await makeGitRepo(repo, history)).at(-1)!;
  });
  const manifestOf = async (root: string, id: string) =>
    JSON.parse(await readFile(path.join(root, 'fixtures', id, 'fixture.json'), 'utf8')) as Record<string, any>;

  test('the detected setup fails: nothing is written, and the hint names --setup and --no-setup', async () => {
    const r = await runCli(['new', 'clamp', '--from-commit', sha, '--repo', repo, '--root', path.join(base, 'setup-detected')], {
      env: env(),
    });
    expect(r.stderr).toContain('setup: python3 -m pip install -r requirements.txt (with network)');
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr).toMatch(/not written: clamp is \w+: setup failed: /);
    expect(r.stderr).toMatch(
      /hint: --setup <command> to give the setup yourself .*--no-setup when the sandbox already has what the tests need/,
    );
  });

  test('--no-setup: a valid fixture without setup', async () => {
    const root = path.join(base, 'setup-none');
    const r = await runCli(['new', 'clamp', '--from-commit', sha, '--repo', repo, '--root', root, '--no-setup'], { env: env() });
    expect(r.stderr).toContain('setup: (none: --no-setup)');
    expect(r.code, r.stderr).toBe(0);
    expect((await manifestOf(root, 'clamp')).setup).toBeUndefined();
  });

  test('--setup and --setup-network: the given commands are the fixture setup, and run', async () => {
    const root = path.join(base, 'setup-given');
    const given = ['python3 -c "import clamp"', 'touch .set-up'];
    const r = await runCli(
      ['new', 'clamp', '--from-commit', sha, '--repo', repo, '--root', root, '--setup', given[0]!, '--setup', given[1]!, '--setup-network'],
      { env: env() },
    );
    expect(r.stderr).toContain(`setup: ${given.join(' && ')} (with network) (given: --setup)`);
    expect(r.code, r.stderr).toBe(0);
    expect((await manifestOf(root, 'clamp')).setup).toEqual({ commands: given, timeoutSec: 600, network: true });
    // The transcript shows the given setup ran in the sandbox.
    const transcripts = path.join(root, 'transcripts');
    const [run] = await readdir(transcripts);
    const lines = (await readFile(path.join(transcripts, run!, 'clamp.jsonl'), 'utf8'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines.filter((l) => l.type === 'command' && l.phase === 'setup').map((l) => [l.command, l.exitCode])).toEqual(
      given.map((c) => [c, 0]),
    );
  });

  test('mine: the setup failures are named with the hint; --no-setup keeps the fix', async () => {
    const failed = await runCli(['mine', repo, '--root', path.join(base, 'mine-detected'), '--limit', '1'], { env: env() });
    expect(failed.code, failed.stderr).toBe(1);
    expect(failed.stdout).toMatch(/setup failed: /);
    expect(failed.stderr).toMatch(/for the setup's failures: --setup <command> to give the setup yourself/);
    const kept = await runCli(['mine', repo, '--root', path.join(base, 'mine-none'), '--limit', '1', '--no-setup', '--json'], {
      env: env(),
    });
    expect(kept.code, kept.stderr).toBe(0);
    expect((JSON.parse(kept.stdout) as { commits: { kept: boolean }[] }).commits.map((c) => c.kept)).toEqual([true]);
  });

  test('bad input: --setup-network without --setup, --no-setup without --from-commit', async () => {
    const alone = await runCli(
      ['new', 'clamp', '--from-commit', sha, '--repo', repo, '--root', path.join(base, 'setup-bad'), '--setup-network'],
      {
        env: env(),
      },
    );
    expect(alone.code).toBe(2);
    expect(alone.stderr).toContain('--setup-network goes with --setup <command>');
    const plain = await runCli(['new', 'clamp', '--root', path.join(base, 'setup-bad'), '--no-setup'], { env: env() });
    expect(plain.code).toBe(2);
    expect(plain.stderr).toContain('--setup goes with --from-commit');
    expect(await readdir(path.join(base, 'setup-bad')).catch(() => [])).toEqual([]);
  });
});

// pytest stops a whole session when one test module fails to import, as a fix's new test of a
// name the bug lacks does: RED must still run the other modules, so that only the failing
// module's tests are failToPass and the rest passToPass (not every test that passes in GREEN).
test('a fix whose test imports a name the bug lacks: only that module is failToPass', async () => {
  const other = 'def test_one():\n    assert 1 + 1 == 2\n\n\ndef test_two():\n    assert "a" * 2 == "aa"\n';
  const tests = (fixed: boolean) =>
    `from clamp import clamp${fixed ? ', clamp_all' : ''}\n\n\ndef test_inside():\n    assert clamp(5, 0, 10) == 5\n${fixed ? '\n\ndef test_all():\n    assert clamp_all([15, -3], 0, 10) == [10, 0]\n' : ''}`;
  const bug = 'def clamp(x, lo, hi):\n    return min(hi, max(lo, x))\n';
  const repo = path.join(base, 'repos', 'import-error');
  const shas = await makeGitRepo(repo, [
    {
      message: 'Add clamp()',
      files: {
        'pytest.ini': '[pytest]\npythonpath = .\n',
        'clamp.py': bug,
        'tests/test_clamp.py': tests(false),
        'tests/test_other.py': other,
      },
    },
    {
      message: 'Add clamp_all()',
      files: {
        'clamp.py': `${bug}\n\ndef clamp_all(xs, lo, hi):\n    return [clamp(x, lo, hi) for x in xs]\n`,
        'tests/test_clamp.py': tests(true),
      },
    },
  ]);
  const root = path.join(base, 'project-import-error');
  const r = await runCli(['new', 'clamp_all', '--from-commit', shas[1]!, '--repo', repo, '--root', root], { env: { XDG_CACHE_HOME: xdg } });
  expect(r.code, r.stderr).toBe(0);
  const manifest = JSON.parse(await readFile(path.join(root, 'fixtures', 'clamp_all', 'fixture.json'), 'utf8')) as Record<string, any>;
  expect({ failToPass: sorted(manifest.tests.failToPass), passToPass: sorted(manifest.tests.passToPass) }).toEqual({
    failToPass: ['tests/test_clamp.py::test_all', 'tests/test_clamp.py::test_inside'],
    passToPass: ['tests/test_other.py::test_one', 'tests/test_other.py::test_two'],
  });
});

// A fix that needs a new dependency cannot be GREEN here (setup runs once, before the patch): the
// reason says so, where the test output alone only says the test still fails.
test('a fix that changes what setup installs from: not GREEN, and the reason says why', async () => {
  const test = (v: string) => `def test_version():\n    assert open("installed.txt").read().strip() == "${v}"\n`;
  const repo = path.join(base, 'repos', 'dependency');
  const shas = await makeGitRepo(repo, [
    { message: 'Start', files: { 'requirements.txt': 'dep==1\n', 'lib.py': 'X = 1\n', 'test_lib.py': test('dep==1') } },
    { message: 'Fix with dep 2', files: { 'requirements.txt': 'dep==2\n', 'lib.py': 'X = 2\n', 'test_lib.py': test('dep==2') } },
  ]);
  const r = await runCli(
    [
      'new',
      'dep',
      '--from-commit',
      shas[1]!,
      '--repo',
      repo,
      '--root',
      path.join(base, 'project-dependency'),
      '--setup',
      'cp requirements.txt installed.txt',
    ],
    { env: { XDG_CACHE_HOME: xdg } },
  );
  expect(r.code, r.stderr).toBe(1);
  expect(r.stderr).toMatch(
    /not written: dep is not_green: not GREEN: .*\(the fix changes requirements\.txt, which setup installs from, and setup runs before the patch only/,
  );
});

// The detected command runs everything the runner finds: a module named like a test that fails
// before and after the fix keeps the fixture from GREEN. --test-command runs only what it names.
test('--test-command: the command instead of the detected one, for new --from-commit and mine', async () => {
  const bug = 'def clamp(x, lo, hi):\n    return max(lo, x)\n';
  const fixed = 'def clamp(x, lo, hi):\n    return min(hi, max(lo, x))\n';
  const tests = (upper: boolean) =>
    `from clamp import clamp\n\n\ndef test_inside():\n    assert clamp(5, 0, 10) == 5\n${upper ? '\n\ndef test_upper():\n    assert clamp(15, 0, 10) == 10\n' : ''}`;
  const repo = path.join(base, 'repos', 'test-command');
  const shas = await makeGitRepo(repo, [
    {
      message: 'Add clamp()',
      files: {
        'pytest.ini': '[pytest]\npythonpath = .\n',
        'clamp.py': bug,
        'tests/test_clamp.py': tests(false),
        // Data the tools read, named like a test module: it cannot be imported by pytest.
        'tools/test_data.py': 'import a_module_that_is_not_here\n',
      },
    },
    { message: 'Fix the upper bound', files: { 'clamp.py': fixed, 'tests/test_clamp.py': tests(true) } },
  ]);
  const env = { XDG_CACHE_HOME: xdg };
  const args = (root: string) => ['new', 'clamp_tc', '--from-commit', shas[1]!, '--repo', repo, '--root', path.join(base, root)];
  const detected = await runCli(args('project-tc-detected'), { env });
  expect(detected.code, detected.stderr).toBe(1);
  expect(detected.stderr).toMatch(/not written: clamp_tc is not_green: .*tools\/test_data\.py/);
  expect(detected.stderr).toContain('--test-command <command> if the detected command runs tests it should not');

  const given = await runCli([...args('project-tc-given'), '--test-command', 'python -m pytest tests'], { env });
  expect(given.code, given.stderr).toBe(0);
  expect(given.stderr).toContain('test command: python -m pytest tests (given: --test-command)');
  const manifest = JSON.parse(
    await readFile(path.join(base, 'project-tc-given', 'fixtures', 'clamp_tc', 'fixture.json'), 'utf8'),
  ) as Record<string, any>;
  expect(manifest.test.command).toBe('python -m pytest tests');
  expect(manifest.tests).toEqual({ failToPass: ['tests/test_clamp.py::test_upper'], passToPass: ['tests/test_clamp.py::test_inside'] });

  const mined = await runCli(
    ['mine', repo, '--root', path.join(base, 'mine-tc'), '--limit', '1', '--json', '--test-command', 'python -m pytest tests'],
    {
      env,
    },
  );
  expect(mined.code, mined.stderr).toBe(0);
  expect((JSON.parse(mined.stdout) as { commits: { kept: boolean }[] }).commits.map((c) => c.kept)).toEqual([true]);

  // Bad input: an empty command; --test-command without --from-commit.
  expect((await runCli([...args('project-tc-bad'), '--test-command', ' '], { env })).stderr).toMatch(/an empty --test-command/);
  const plain = await runCli(['new', 'clamp_tc', '--root', path.join(base, 'project-tc-bad'), '--test-command', 'pytest'], { env });
  expect(plain.code).toBe(2);
  expect(plain.stderr).toContain('--test-command goes with --from-commit');
  expect(await readdir(path.join(base, 'project-tc-bad')).catch(() => [])).toEqual([]);
});
