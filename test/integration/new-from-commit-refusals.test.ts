import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { simpleGit } from 'simple-git';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { JS_REPOS } from '../helpers/fix-repos.js';
import { isolatedCache, makeGitRepo } from '../helpers/git-repos.js';

// What `new --from-commit` refuses, each with its code and exit 2 and no stack trace; a fixture
// that is not RED is reported and not written; and a repository given as a URL is cloned once into
// the mirror cache, fetched again only when a commit is missing, and named by fixtures by reference.

let base = '';
let repo = '';
let shas: string[] = [];
let env: Record<string, string> = {};
const nodeRepo = JS_REPOS.find((r) => r.runner === 'node-test')!;
const TEST = 'test/clamp.test.js';

beforeAll(async () => {
  base = await mkdtemp(path.join(os.tmpdir(), 'rg-refusals-'));
  env = { XDG_CACHE_HOME: await isolatedCache(base) };
  repo = path.join(base, 'clamp');
  const last = nodeRepo.history.at(-1)!;
  shas = await makeGitRepo(repo, [
    ...nodeRepo.history,
    /* 3 */ { message: 'Test clamp at its bounds', files: { [TEST]: `${last.files[TEST]}\ntest('bounds', () => {});\n` } },
    /* 4 */ { message: 'Merge the docs branch', merge: true, files: { 'docs/clamp.md': '# clamp\n' } },
    /* 5 */ {
      message: 'Name the bounds and test the lower one',
      files: {
        'src/clamp.js': last.files['src/clamp.js']!.replace('(x, lo, hi)', '(x, lo, hi /* inclusive */)'),
        [TEST]: `${last.files[TEST]}\ntest('lower', () => {});\n`,
      },
    },
  ]);
});
afterAll(async () => {
  await rm(base, { recursive: true, force: true });
});

async function refused(args: string[], code: string, message: RegExp) {
  const root = path.join(base, 'refused');
  const r = await runCli(['new', 'x', ...args, '--root', root], { env });
  expect(r.code, r.stderr).toBe(2);
  expect(r.stderr).toMatch(new RegExp(`^redgreen: ${code}: `));
  expect(r.stderr).toMatch(message);
  expect(r.stderr).not.toMatch(/\n\s+at /);
  expect(existsSync(path.join(root, 'fixtures', 'x'))).toBe(false);
}

describe('new --from-commit refuses, with a code and exit 2', () => {
  test('a folder that is not a repository', async () => {
    await mkdir(path.join(base, 'plain'), { recursive: true });
    await refused(['--from-commit', shas[2]!, '--repo', path.join(base, 'plain')], 'repo_not_found', /plain is not a git repository\n/);
    await refused(['--from-commit', shas[2]!, '--repo', path.join(base, 'nowhere')], 'repo_not_found', /is not a folder/);
  });
  test('a commit the repository does not have', () =>
    refused(['--from-commit', 'abcdef1234567', '--repo', repo], 'commit_not_found', /has no commit abcdef1234567/));
  test('the first commit, a commit without test changes, one with only test changes, a merge', async () => {
    await refused(['--from-commit', shas[0]!, '--repo', repo], 'commit_unsuitable', /first commit: it has no parent/);
    await refused(
      ['--from-commit', shas[1]!, '--repo', repo],
      'commit_unsuitable',
      /changes no test file \(README\.md\), by node-test's test files/,
    );
    await refused(['--from-commit', shas[3]!, '--repo', repo], 'commit_unsuitable', /changes only test files \(test\/clamp\.test\.js\)/);
    await refused(['--from-commit', shas[4]!, '--repo', repo], 'commit_unsuitable', /is a merge commit \(2 parents\)/);
  });
  test('--runner with --from-commit, --repo without it', async () => {
    await refused(['--from-commit', shas[2]!, '--repo', repo, '--runner', 'jest'], 'usage', /the runner is detected/);
    await refused(['--repo', repo], 'usage', /--repo goes with --from-commit/);
  });
});

test('a fixture that is not RED is reported and not written; --keep-invalid writes it', async () => {
  const root = path.join(base, 'not-red');
  const r = await runCli(['new', 'bounds', '--from-commit', shas[5]!, '--repo', repo, '--root', root], { env });
  expect(r.code, r.stderr).toBe(1);
  expect(r.stderr).toMatch(/not written: bounds is not_red: not RED: every test passes before the patch/);
  expect(existsSync(path.join(root, 'fixtures', 'bounds'))).toBe(false);
  const kept = await runCli(['new', 'bounds', '--from-commit', shas[5]!, '--repo', repo, '--root', root, '--keep-invalid'], { env });
  expect(kept.code).toBe(1);
  expect(kept.stderr).toMatch(/written anyway \(--keep-invalid\): .*bounds\/ .* is not_red/);
  expect(existsSync(path.join(root, 'fixtures', 'bounds', 'fixture.json'))).toBe(true);
});

test('a URL is mirrored once, fetched when a commit is missing, and named by a fixture by reference', async () => {
  const upstream = path.join(base, 'upstream.git');
  await simpleGit().raw(['clone', '-q', '--bare', repo, upstream]);
  const url = `file://${upstream}`;
  const root = path.join(base, 'by-reference');
  const made = await runCli(['new', 'clamp_ref', '--from-commit', shas[2]!, '--repo', url, '--by-reference', '--root', root], { env });
  expect(made.code, made.stderr).toBe(0);
  const manifest = JSON.parse(await readFile(path.join(root, 'fixtures', 'clamp_ref', 'fixture.json'), 'utf8')) as Record<string, any>;
  expect(manifest.source).toEqual({ repo: url, commit: shas[1], testPatch: 'test.patch' });
  expect((await readdir(path.join(root, 'fixtures', 'clamp_ref'))).sort()).toEqual(['ISSUE.md', 'fixture.json', 'test.patch']);
  expect(existsSync(path.join(root, 'fixture.schema.json'))).toBe(true);
  const mirrors = await readdir(path.join(env.XDG_CACHE_HOME!, 'redgreen', 'mirrors'));
  expect(mirrors.filter((m) => m.endsWith('.git'))).toHaveLength(1);

  // A fix pushed upstream after the mirror was made: the mirror fetches it.
  const work = path.join(base, 'work');
  await simpleGit().raw(['clone', '-q', upstream, work]);
  const git = simpleGit(work).env({
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: base,
    GIT_AUTHOR_NAME: 'Dev',
    GIT_AUTHOR_EMAIL: 'dev@example.com',
    GIT_COMMITTER_NAME: 'Dev',
    GIT_COMMITTER_EMAIL: 'dev@example.com',
  });
  const source = path.join(work, 'src', 'clamp.js');
  const fixed = await readFile(source, 'utf8');
  await writeFile(source, fixed.replace('Math.min(hi, Math.max(lo, x))', 'Math.min(hi, x)'));
  await git.raw(['commit', '-qam', 'Simplify clamp']);
  await writeFile(source, fixed);
  await writeFile(path.join(work, TEST), `${await readFile(path.join(work, TEST), 'utf8')}\ntest('raises far below', () => {});\n`);
  await git.raw(['commit', '-qam', "Fix clamp's lower bound"]);
  await git.raw(['push', '-q', 'origin', 'HEAD:main']);
  const fix = (await git.revparse(['HEAD'])).trim();
  const again = await runCli(['new', 'clamp_again', '--from-commit', fix, '--repo', url, '--by-reference', '--root', root], { env });
  expect(again.code, again.stderr).toBe(0);
  expect((await readdir(path.join(env.XDG_CACHE_HOME!, 'redgreen', 'mirrors'))).filter((m) => m.endsWith('.git'))).toEqual(
    mirrors.filter((m) => m.endsWith('.git')),
  );
  const check = await runCli(['selfcheck', '--root', root, '--json'], { env });
  expect(check.code, check.stderr).toBe(0);
  const report = JSON.parse(check.stdout) as { fixtures: { fixtureId: string; verdict: string }[] };
  expect(report.fixtures.map((f) => [f.fixtureId, f.verdict])).toEqual([
    ['clamp_again', 'valid'],
    ['clamp_ref', 'valid'],
  ]);
});

test('a local repository is named relative to the fixture folder when it is in the project, else by its absolute path', async () => {
  const root = path.join(base, 'local-reference');
  const inside = path.join(root, 'vendor', 'clamp');
  await simpleGit().raw(['clone', '-q', repo, inside]);
  const made = await runCli(['new', 'clamp_in', '--from-commit', shas[2]!, '--repo', inside, '--by-reference', '--root', root], { env });
  expect(made.code, made.stderr).toBe(0);
  const out = await runCli(['new', 'clamp_out', '--from-commit', shas[2]!, '--repo', repo, '--by-reference', '--root', root], { env });
  expect(out.code, out.stderr).toBe(0);
  const source = async (id: string) =>
    (JSON.parse(await readFile(path.join(root, 'fixtures', id, 'fixture.json'), 'utf8')) as { source: { repo: string } }).source.repo;
  expect(await source('clamp_in')).toBe(path.join('..', '..', 'vendor', 'clamp'));
  expect(await source('clamp_out')).toBe(path.resolve(repo));
  const check = await runCli(['selfcheck', '--root', root, '--json'], { env });
  expect(check.code, check.stderr).toBe(0);
});
