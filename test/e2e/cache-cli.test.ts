import { spawnSync } from 'node:child_process';
import { readdir, utimes, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { codeCacheFile } from '../../harness/code-cache.js';
import { overlayAllowed } from '../../harness/sandbox/host/overlay.js';
import { diffTrees } from '../../harness/fixtures/scaffold.js';
import { openRepository } from '../../harness/fixtures/mirror.js';
import { materialiseTree } from '../../harness/fixtures/tree-cache.js';
import { REPO, runCli } from '../helpers/cli.js';
import { makeGitRepo } from '../helpers/git-repos.js';
import { makeProject } from '../helpers/project.js';
import { useTempDirs } from '../helpers/temp-dirs.js';

const tempDir = useTempDirs('rg-cache-cli-');

interface Listed {
  key: string;
  fixture: string;
  backend: string;
  bytes: number;
  lastUsed: string;
}

// Fixtures whose setup writes a file of a known size; the test is a shell check.
const fixture = async (kb: number) => ({
  manifest: {
    runner: 'exit-code',
    language: 'shell',
    test: { command: 'test -s deps/blob && test "$(cat value.txt)" = good', timeoutSec: 30 },
    setup: { commands: [`mkdir deps && head -c ${kb * 1024} /dev/zero > deps/blob`], timeoutSec: 30 },
  },
  files: { 'value.txt': 'bad\n' },
  oracle: await diffTrees({ 'value.txt': 'bad\n' }, { 'value.txt': 'good\n' }),
});

describe('redgreen cache', () => {
  test('list shows what selfcheck cached; prune removes by size, age, or all', async () => {
    const project = await makeProject({ small: await fixture(10), big: await fixture(200) });
    const env = { XDG_CACHE_HOME: await tempDir() };
    try {
      const cli = (...args: string[]) => runCli(args, { cwd: project.root, env });
      const list = async () => {
        const r = await cli('cache', 'list', '--json');
        expect(r.code).toBe(0);
        return JSON.parse(r.stdout) as { maxBytes: number; totalBytes: number; entries: Listed[] };
      };
      expect((await list()).entries).toEqual([]);
      expect((await cli('selfcheck', '--root', project.root)).code).toBe(0);
      // A hit is a use: small becomes the most recently used entry.
      expect((await cli('selfcheck', 'small', '--root', project.root)).code).toBe(0);

      const listed = await list();
      expect(listed.maxBytes).toBe(2 * 1024 ** 3);
      expect(listed.entries.map((e) => [e.fixture, e.backend])).toEqual(
        expect.arrayContaining([
          ['small', 'local'],
          ['big', 'local'],
        ]),
      );
      const big = listed.entries.find((e) => e.fixture === 'big')!;
      expect(big.bytes).toBeGreaterThan(200 * 1024);
      expect(listed.totalBytes).toBe(listed.entries.reduce((n, e) => n + e.bytes, 0));
      const text = await cli('cache', 'list');
      expect(text.stdout).toContain(big.key);
      expect(text.stdout).toContain('2 entries');

      // As root, each cached setup is also kept as a prepared layer (copy-on-write workspaces).
      const layers = overlayAllowed() ? 2 : 0;
      expect(JSON.parse(text.stdout.length ? (await cli('cache', 'list', '--json')).stdout : '{}').layers).toHaveLength(layers);
      expect(JSON.parse((await cli('cache', 'prune', '--older-than', '1', '--json')).stdout)).toMatchObject({
        removed: [],
        // and the CLI's code cache (this isolated cache folder's)
        left: 2 + layers + 1,
      });
      expect((await list()).entries.map((e) => e.fixture)).toEqual(['big', 'small']);
      // One byte too many: the least recently used entry goes, and only it.
      const pruned = JSON.parse((await cli('cache', 'prune', '--max', `${listed.totalBytes - 1}`, '--json')).stdout);
      const removedOf = (kind: string) =>
        pruned.removed.filter((e: Listed & { kind: string }) => e.kind === kind).map((e: Listed) => e.fixture);
      expect(removedOf('setup')).toEqual(['big']);
      // Each kind has the cap: big's layer (its whole workspace) is the least recently used one over it.
      expect(removedOf('layer')).toEqual(layers ? ['big'] : []);
      expect((await list()).entries.map((e) => e.fixture)).toEqual(['small']);

      const all = await cli('cache', 'prune', '--all');
      expect(all.code).toBe(0);
      // small's entry and layer, and the CLI's code cache
      expect(all.stdout).toContain(`${1 + layers / 2 + 1} removed`);
      expect((await readdir(path.join(env.XDG_CACHE_HOME, 'redgreen', 'setup'))).filter((n) => n !== 'layers')).toEqual([]);
      expect(await readdir(path.join(env.XDG_CACHE_HOME, 'redgreen', 'setup', 'layers')).catch(() => [])).toEqual([]);
    } finally {
      await project.cleanup();
    }
  });

  test("commits' trees and mirrors are listed and pruned; what a live process read stays", async () => {
    const base = await tempDir();
    const env = { XDG_CACHE_HOME: path.join(base, 'xdg') };
    const cacheDir = path.join(env.XDG_CACHE_HOME, 'redgreen');
    const repoDir = path.join(base, 'repo');
    const [first, second] = await makeGitRepo(repoDir, [
      { message: 'one', files: { 'a.txt': 'one\n' } },
      { message: 'two', files: { 'a.txt': 'two\n', 'b.txt': 'b\n' } },
    ]);
    // This process reads the first commit's tree and the mirror of the repository's URL: in use.
    const mirror = await openRepository(`file://${repoDir}`, { cacheDir });
    await materialiseTree(mirror, first!, cacheDir);
    // Another process read the second's, and is gone.
    const other = spawnSync(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        `const { materialiseTree } = await import(${JSON.stringify(path.join(REPO, 'dist/fixtures/tree-cache.js'))});
         await materialiseTree({ ref: 'repo', gitDir: ${JSON.stringify(path.join(repoDir, '.git'))}, kind: 'local' }, ${JSON.stringify(second)}, ${JSON.stringify(cacheDir)});`,
      ],
      { encoding: 'utf8' },
    );
    expect(other.status, other.stderr).toBe(0);

    type Folder = Listed & { kind: string; inUse: boolean };
    const listed = await runCli(['cache', 'list', '--json'], { env });
    expect(listed.code, listed.stderr).toBe(0);
    // The CLI's own code cache (code-cache.ts) is listed with them: this isolated cache folder's.
    const folders = (JSON.parse(listed.stdout) as { folders: Folder[] }).folders.filter((f) => f.kind !== 'code');
    expect(folders.map((f) => [f.kind, f.key.slice(0, 40), f.inUse]).sort()).toEqual(
      [
        ['mirror', path.basename(mirror.gitDir).slice(0, 40), true],
        ['tree', first, true],
        ['tree', second, false],
      ].sort(),
    );
    expect(folders.every((f) => f.bytes > 0)).toBe(true);
    expect((await runCli(['cache', 'list'], { env })).stdout).toMatch(/4 tree\(s\), mirror\(s\) and code cache\(s\)/);

    const pruned = await runCli(['cache', 'prune', '--all'], { env });
    expect(pruned.code, pruned.stderr).toBe(0);
    expect(pruned.stdout).toContain(`removed tree ${second}`);
    expect(pruned.stdout).toContain('2 removed');
    expect((await readdir(path.join(cacheDir, 'trees'))).filter((n) => !n.startsWith('.'))).toEqual([first]);
  });

  test("the CLI's code caches are listed, one per Node version, and pruned by age or all; the next command makes its own again", async () => {
    const env = { XDG_CACHE_HOME: await tempDir() };
    const codeDir = path.join(env.XDG_CACHE_HOME, 'redgreen', 'code');
    const mine = path.basename(codeCacheFile(path.join(env.XDG_CACHE_HOME, 'redgreen')));
    expect((await runCli(['cache', 'list'], { env })).code).toBe(0);
    // Another Node's, written 30 days ago, and what a process killed while writing left.
    await writeFile(path.join(codeDir, 'cli-node18.20.0-x64.v8'), Buffer.alloc(1000));
    await writeFile(path.join(codeDir, `${mine}.999999.tmp`), Buffer.alloc(10));
    const monthAgo = new Date(Date.now() - 30 * 86_400_000);
    await utimes(path.join(codeDir, 'cli-node18.20.0-x64.v8'), monthAgo, monthAgo);
    // This Node's, written 30 days ago too (a build that old): the next start that reads it stamps it.
    await utimes(path.join(codeDir, mine), monthAgo, monthAgo);

    type Row = { kind: string; key: string; bytes: number };
    const codeRows = async () =>
      (JSON.parse((await runCli(['cache', 'list', '--json'], { env })).stdout) as { folders: Row[] }).folders.filter(
        (f) => f.kind === 'code',
      );
    const listed = await codeRows();
    // Oldest first: this Node's last, read by the command that listed it.
    expect(listed.map((f) => f.key)).toEqual(['cli-node18.20.0-x64.v8', `${mine}.999999.tmp`, mine]);
    expect(listed.find((f) => f.key === mine)!.bytes).toBeGreaterThan(100_000);
    const text = (await runCli(['cache', 'list'], { env })).stdout.split('\n');
    expect(text.find((l) => l.includes(` ${mine} `))).toMatch(/^\W*code\b/);

    const old = await runCli(['cache', 'prune', '--older-than', '7'], { env });
    expect(old.stdout).toContain('removed code cache cli-node18.20.0-x64.v8');
    expect(old.stdout).toContain('1 removed');
    expect((await readdir(codeDir)).sort()).toEqual([mine, `${mine}.999999.tmp`].sort());

    const all = await runCli(['cache', 'prune', '--all'], { env });
    expect(all.stdout).toContain(`removed code cache ${mine}`);
    expect(await readdir(codeDir)).toEqual([]);
    // The next command compiles the bundle and writes its cache again.
    expect((await runCli(['validate', '--help'], { env })).code).toBe(0);
    expect(await readdir(codeDir)).toEqual([mine]);
  });

  test('bad sizes and combined modes are usage errors that say what to write', async () => {
    const env = { XDG_CACHE_HOME: await tempDir() };
    const both = await runCli(['cache', 'prune', '--all', '--max', '1GB'], { env });
    expect(both.code).toBe(2);
    expect(both.stderr).toContain('--all and --max cannot be combined');
    const badMax = await runCli(['cache', 'prune', '--max', 'lots'], { env });
    expect(badMax.code).toBe(2);
    expect(badMax.stderr).toContain('--max: must be a size such as 2GiB');
    const badEnv = await runCli(['cache', 'list'], { env: { ...env, REDGREEN_CACHE_MAX: 'lots' } });
    expect(badEnv.code).toBe(2);
    expect(badEnv.stderr).toContain('REDGREEN_CACHE_MAX="lots" is not a size');
    const capped = await runCli(['cache', 'list', '--json'], { env: { ...env, REDGREEN_CACHE_MAX: '500MB' } });
    expect(JSON.parse(capped.stdout).maxBytes).toBe(500 * 1000 ** 2);
  });
});
