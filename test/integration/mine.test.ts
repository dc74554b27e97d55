import { mkdtemp, readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import type { MineRow } from '../../harness/commands/mine.js';
import { runCli } from '../helpers/cli.js';
import { JS_REPOS } from '../helpers/fix-repos.js';
import { isolatedCache, makeGitRepo, type CommitSpec } from '../helpers/git-repos.js';
import { mineHistory } from '../helpers/mine-history.js';

// `redgreen mine` through the built CLI over a twenty-commit history holding five real fixes:
// it keeps those five as valid fixtures and names why each other commit is not one.

let base = '';
let xdg = '';
beforeAll(async () => {
  base = await mkdtemp(path.join(os.tmpdir(), 'rg-mine-'));
  xdg = await isolatedCache(base);
});
afterAll(async () => {
  await rm(base, { recursive: true, force: true });
});

test('mine keeps the five real fixes and explains the other fifteen commits', async () => {
  const { history, fixes, reasons } = mineHistory();
  const repo = path.join(base, 'textkit');
  const shas = await makeGitRepo(repo, history);
  const root = path.join(base, 'project');
  // pytest without the machine's plugins starts in a third of the time, and nothing here needs them.
  const env = { XDG_CACHE_HOME: xdg, PIP_DISABLE_PIP_VERSION_CHECK: '1', PYTEST_DISABLE_PLUGIN_AUTOLOAD: '1' };
  const pass = ['--pass-env', 'PYTEST_DISABLE_PLUGIN_AUTOLOAD', '--pass-env', 'PIP_DISABLE_PIP_VERSION_CHECK'];
  const r = await runCli(['mine', repo, '--root', root, '--max-lines', '100', '--json', ...pass], { env });
  expect(r.code, r.stderr).toBe(0);
  const out = JSON.parse(r.stdout) as { walked: number; commits: MineRow[] };
  // First-parent history: the merge's side commit is not walked.
  expect(out.walked).toBe(20);
  const bySha = new Map(out.commits.map((c) => [c.commit, c]));
  const kept = out.commits.filter((c) => c.kept).map((c) => c.commit);
  expect(kept.sort()).toEqual(fixes.map((i) => shas[i]!).sort());
  for (const [i, pattern] of Object.entries(reasons)) {
    const row = bySha.get(shas[Number(i)]!);
    expect(row, `commit ${i} (${history[Number(i)]!.message}) is listed`).toBeDefined();
    expect(row!.kept).toBe(false);
    expect(row!.reason, `commit ${i}: ${history[Number(i)]!.message}`).toMatch(pattern);
  }
  expect(out.commits).toHaveLength(20);
  const ids = fixes.map((i) => `textkit-${shas[i]!.slice(0, 8)}`).sort();
  expect((await readdir(path.join(root, 'fixtures'))).sort()).toEqual(ids);
  // What mine kept, selfcheck proves again on its own.
  const check = await runCli(['selfcheck', '--root', root, '--json', ...pass], { env });
  expect(check.code, check.stderr).toBe(0);
  const report = JSON.parse(check.stdout) as { fixtures: { fixtureId: string; verdict: string }[] };
  expect(report.fixtures.map((f) => f.verdict)).toEqual(['valid', 'valid', 'valid', 'valid', 'valid']);
  // A second mine over the same history finds them already made, and makes nothing twice.
  const again = await runCli(['mine', repo, '--root', root, '--limit', '3'], { env });
  expect(again.code, again.stderr).toBe(0);
  expect(again.stdout).toContain('0 fixture(s) kept');
  expect(again.stdout).toContain(`already a fixture: textkit-${shas[17]!.slice(0, 8)}`);
});

test('mine over a JavaScript history (node:test) with --repeat 2: the fixes are kept, a flaky one is not, with reasons as for Python', async () => {
  const node = JS_REPOS.find((r) => r.runner === 'node-test')!;
  const TEST = 'test/clamp.test.js';
  const fixed = node.history.at(-1)!.files;
  const tests = fixed[TEST]!;
  const history: CommitSpec[] = [
    ...node.history,
    /* 3 */ { message: 'Test clamp at its bounds', files: { [TEST]: `${tests}\ntest('bounds', () => {});\n` } },
    /* 4 */ {
      message: 'Simplify clamp',
      files: { 'src/clamp.js': fixed['src/clamp.js']!.replace('Math.min(hi, Math.max(lo, x))', 'Math.min(hi, x)') },
    },
    /* 5 */ {
      message: "Fix clamp's lower bound",
      files: {
        'src/clamp.js': fixed['src/clamp.js']!,
        [TEST]: `${tests}\ntest('bounds', () => {});\ntest('raises far below', () => { if (clamp(-100, 0, 10) !== 0) throw new Error('below'); });\n`,
      },
    },
    /* 6 */ {
      message: 'Fix clamp with swapped bounds',
      files: {
        'src/clamp.js': fixed['src/clamp.js']!.replace('{\n', '{\n  if (lo > hi) [lo, hi] = [hi, lo];\n'),
        // A test that leaks state between runs: it fails every other time it runs in the same folder.
        [TEST]: `${tests}\ntest('bounds', () => {});\ntest('raises far below', () => { if (clamp(-100, 0, 10) !== 0) throw new Error('below'); });\ntest('swapped bounds', () => { if (clamp(5, 10, 0) !== 5) throw new Error('swapped'); });\nimport { existsSync, readFileSync, writeFileSync } from 'node:fs';\ntest('counts its runs', () => { const n = existsSync('.runs') ? Number(readFileSync('.runs', 'utf8')) + 1 : 1; writeFileSync('.runs', String(n)); if (n % 2) throw new Error('odd run'); });\n`,
      },
    },
  ];
  const repo = path.join(base, 'clamp-js');
  const shas = await makeGitRepo(repo, history);
  const root = path.join(base, 'project-js');
  const r = await runCli(['mine', repo, '--root', root, '--prefix', 'clamp', '--repeat', '2', '--json'], { env: { XDG_CACHE_HOME: xdg } });
  expect(r.code, r.stderr).toBe(0);
  const rows = (JSON.parse(r.stdout) as { commits: MineRow[] }).commits;
  expect(rows.map((c) => [c.commit, c.kept, c.kept ? c.id : c.reason.split(/[(:]/)[0]!.trim()])).toEqual([
    [shas[6], false, 'flaky'],
    [shas[5], true, `clamp-${shas[5]!.slice(0, 8)}`],
    [shas[4], false, 'changes no test file'],
    [shas[3], false, 'changes only test files'],
    [shas[2], true, `clamp-${shas[2]!.slice(0, 8)}`],
    [shas[1], false, 'changes no test file'],
    [shas[0], false, "is the repository's first commit"],
  ]);
  // A walk that yields no fixture at all fails, and says what to do.
  const none = await runCli(['mine', repo, '--root', path.join(base, 'project-none'), '--paths', 'docs/**'], {
    env: { XDG_CACHE_HOME: xdg },
  });
  expect(none.code, none.stderr).toBe(1);
  expect(none.stdout).toContain('0 fixture(s) kept');
  expect(none.stderr).toMatch(/no fixture in 0 commit\(s\).*widen the walk/);
});
