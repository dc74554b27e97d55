import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { fingerprintFixture, readFixture } from '../../harness/fixtures/fingerprint.js';
import { discoverFixtures } from '../../harness/fixtures/load.js';
import { openRepository, resolveCommit } from '../../harness/fixtures/mirror.js';
import { scanSelection, selectFixtures } from '../../harness/fixtures/select.js';
import { materialiseTree } from '../../harness/fixtures/tree-cache.js';
import { SMALL_FILE } from '../../harness/sandbox/core/tree.js';
import { makeGitRepo } from '../helpers/git-repos.js';
import { useTempDirs } from '../helpers/temp-dirs.js';

const temp = useTempDirs('rg-trees-');

const PATCH = `diff --git a/test_a.py b/test_a.py
--- a/test_a.py
+++ b/test_a.py
@@ -1 +1,2 @@
 def test_a(): pass
+def test_b(): pass
`;

async function repo(dir: string) {
  return makeGitRepo(dir, [
    { message: 'one', files: { 'a.py': 'A = 1\n', 'test_a.py': 'def test_a(): pass\n', 'bin/run': '#!/bin/sh\n' } },
    { message: 'two', files: { 'a.py': 'A = 2\n' } },
  ]);
}

describe('the tree cache', () => {
  test('a commit is checked out once, even when asked for twice at once, with the test patch applied', async () => {
    const base = await temp();
    const shas = await repo(path.join(base, 'r'));
    const r = await openRepository(path.join(base, 'r'), { cacheDir: base });
    const sha = await resolveCommit(r, shas[0]!.slice(0, 8));
    expect(sha).toBe(shas[0]);
    const [a, b] = await Promise.all([materialiseTree(r, sha, base), materialiseTree(r, sha, base)]);
    expect(a).toBe(b);
    expect(await readFile(path.join(a, 'a.py'), 'utf8')).toBe('A = 1\n');
    const patched = await materialiseTree(r, sha, base, { text: PATCH, name: 'test.patch' });
    expect(patched).not.toBe(a);
    expect(await readFile(path.join(patched, 'test_a.py'), 'utf8')).toBe('def test_a(): pass\ndef test_b(): pass\n');
    expect(await readFile(path.join(a, 'test_a.py'), 'utf8')).toBe('def test_a(): pass\n');
    // Only finished trees are left (and the marks of who used them): no temporary folder or index.
    expect((await readdir(path.join(base, 'trees'))).sort()).toEqual(['.users', path.basename(a), path.basename(patched)].sort());
    // The repository's own index and work tree are untouched.
    expect(await readFile(path.join(base, 'r', 'a.py'), 'utf8')).toBe('A = 2\n');
  });

  test('a test patch that does not apply, and a commit that does not exist, say so', async () => {
    const base = await temp();
    const shas = await repo(path.join(base, 'r'));
    const r = await openRepository(path.join(base, 'r'), { cacheDir: base });
    await expect(
      materialiseTree(r, shas[0]!, base, { text: PATCH.replace('def test_a(): pass\n+', 'def test_x(): pass\n+'), name: 'test.patch' }),
    ).rejects.toMatchObject({
      code: 'TEST_PATCH_DOES_NOT_APPLY',
    });
    await expect(resolveCommit(r, 'f'.repeat(40))).rejects.toMatchObject({ code: 'COMMIT_NOT_FOUND' });
    expect((await readdir(path.join(base, 'trees'))).filter((n) => n.startsWith('.'))).toEqual([]);
  });
});

describe('fixtures by reference', () => {
  async function project(base: string, source: Record<string, unknown>) {
    const dir = path.join(base, 'fixtures', 'ref');
    await mkdir(dir, { recursive: true });
    await writeFile(path.join(dir, 'ISSUE.md'), '# bug\n');
    await writeFile(path.join(dir, 'test.patch'), PATCH);
    const manifest = { id: 'ref', title: 't', language: 'python', runner: 'pytest', test: { command: 'pytest' }, source };
    await writeFile(path.join(dir, 'fixture.json'), JSON.stringify(manifest));
    return { fixturesDir: path.join(base, 'fixtures'), oraclesDir: path.join(base, 'oracles'), cacheDir: path.join(base, 'cache') };
  }

  test('load a tree from a repository relative to the fixture folder; the fingerprint follows the commit', async () => {
    const base = await temp();
    const shas = await repo(path.join(base, 'r'));
    const roots = await project(base, { repo: '../../r', commit: shas[0], testPatch: 'test.patch' });
    const { fixtures, broken } = await discoverFixtures(roots);
    expect(broken).toEqual([]);
    const f = fixtures[0]!;
    expect(f.treeDir.startsWith(path.join(base, 'cache', 'trees'))).toBe(true);
    expect(f.treeSkip).toEqual([]);
    expect(f.source).toMatchObject({ repo: '../../r', commit: shas[0] });
    expect((await readdir(f.treeDir)).sort()).toEqual(['a.py', 'bin', 'test_a.py']);
    const before = await fingerprintFixture(f);
    await writeFile(
      path.join(base, 'fixtures', 'ref', 'fixture.json'),
      JSON.stringify({
        ...JSON.parse(await readFile(path.join(base, 'fixtures', 'ref', 'fixture.json'), 'utf8')),
        source: { repo: '../../r', commit: shas[1], testPatch: 'test.patch' },
      }),
    );
    const [g] = (await discoverFixtures(roots)).fixtures;
    expect(await fingerprintFixture(g!)).not.toBe(before);
    // The fingerprint reads the fixture's folder, not its tree: there is nothing of the tree to upload from it.
    expect((await readFixture(g!)).tree).toBeNull();
  });

  test('listing, tags and shards read manifests only: a shard checks out the trees of its own fixtures, no others', async () => {
    const base = await temp();
    const shas = await repo(path.join(base, 'r'));
    const roots = await project(base, { repo: '../../r', commit: shas[0] });
    // A second fixture by reference, at the other commit, and a third whose commit does not exist.
    for (const [id, commit] of [
      ['ref2', shas[1]],
      ['ref3', 'abcdef1'],
    ] as const) {
      await mkdir(path.join(roots.fixturesDir, id), { recursive: true });
      const manifest = JSON.parse(await readFile(path.join(roots.fixturesDir, 'ref', 'fixture.json'), 'utf8')) as Record<string, unknown>;
      await writeFile(
        path.join(roots.fixturesDir, id, 'fixture.json'),
        JSON.stringify({ ...manifest, id, tags: [id], source: { repo: '../../r', commit } }),
      );
    }
    const trees = async () =>
      (await readdir(path.join(roots.cacheDir, 'trees')).catch(() => [] as string[])).filter((n) => !n.startsWith('.'));
    const scanned = await scanSelection(roots, { patterns: [], tags: [] });
    expect(scanned.scan.fixtures.map((f) => f.id)).toEqual(['ref', 'ref2', 'ref3']);
    expect(await trees()).toEqual([]);
    // Shard 2/2 holds ref2 alone (ids in order, every second one): only its tree is made.
    const shard = await selectFixtures(roots, { patterns: [], tags: [], shard: { index: 2, count: 2 } });
    expect(shard.discovery.fixtures.map((f) => f.id)).toEqual(['ref2']);
    expect(await trees()).toEqual([shas[1]]);
    // A tag picks ref3, whose commit is missing: broken, with the field named, and nothing else made.
    const tagged = await selectFixtures(roots, { patterns: [], tags: ['ref3'] });
    expect(tagged.discovery.fixtures).toEqual([]);
    expect(tagged.discovery.broken.map((b) => [b.id, b.error.code])).toEqual([['ref3', 'COMMIT_NOT_FOUND']]);
    expect(await trees()).toEqual([shas[1]]);
  });

  test('a missing repository or commit makes a broken fixture naming the field, not a crash', async () => {
    const base = await temp();
    const shas = await repo(path.join(base, 'r'));
    const noRepo = await project(base, { repo: '../../nowhere', commit: shas[0] });
    const a = await discoverFixtures(noRepo);
    expect(a.broken.map((b) => [b.error.code, b.error.message])).toEqual([
      ['REPO_NOT_FOUND', expect.stringMatching(/field "source\.repo": no repository at \.\.\/\.\.\/nowhere/)],
    ]);
    const noCommit = await project(base, { repo: '../../r', commit: 'abcdef1' });
    const b = await discoverFixtures(noCommit);
    expect(b.broken.map((x) => [x.error.code, x.error.message])).toEqual([
      ['COMMIT_NOT_FOUND', expect.stringMatching(/field "source\.commit": .* has no commit abcdef1/)],
    ]);
  });
});

describe('a folder fixture read for its fingerprint', () => {
  test('comes with its tree: every entry, and the bytes of its small files, which its upload copies instead of reading them again', async () => {
    const base = await temp();
    const dir = path.join(base, 'fixtures', 'f');
    await mkdir(path.join(dir, 'src'), { recursive: true });
    await writeFile(path.join(dir, 'ISSUE.md'), '# bug\n');
    await writeFile(path.join(dir, 'src/a.py'), 'A = 1\n');
    await writeFile(path.join(dir, 'big.bin'), Buffer.alloc(SMALL_FILE + 1));
    const manifest = { id: 'f', title: 't', language: 'python', runner: 'pytest', test: { command: 'pytest' } };
    await writeFile(path.join(dir, 'fixture.json'), JSON.stringify(manifest));
    const { fixtures } = await discoverFixtures({ fixturesDir: path.join(base, 'fixtures'), oraclesDir: path.join(base, 'oracles') });
    const read = await readFixture(fixtures[0]!);
    expect(read.sha256).toBe(await fingerprintFixture(fixtures[0]!));
    expect(read.tree!.entries.map((e) => e.rel)).toEqual(['ISSUE.md', 'big.bin', 'fixture.json', 'src', 'src/a.py']);
    // A big file is read again when it is copied: a tree held in memory is a small fixture's.
    expect([...read.tree!.contents.keys()].sort()).toEqual(['ISSUE.md', 'fixture.json', 'src/a.py']);
    expect(read.tree!.contents.get('src/a.py')!.toString()).toBe('A = 1\n');
  });
});
