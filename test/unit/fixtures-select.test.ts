import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { scanFixtures } from '../../harness/fixtures/load.js';
import { idsOfPaths, matchIds, selectFixtures, shardOf } from '../../harness/fixtures/select.js';
import { useTempDirs } from '../helpers/temp-dirs.js';

const tempDir = useTempDirs('rg-select-');
const NAMES = ['bug01', 'bug02', 'bug10', 'js_cart', 'py_inv'];

describe('fixture selection', () => {
  test('ids and globs: each exact id must exist, each glob must match; the order is the folder order', () => {
    expect(matchIds(NAMES, [], 'f')).toEqual(NAMES);
    expect(matchIds(NAMES, ['bug0*'], 'f')).toEqual(['bug01', 'bug02']);
    expect(matchIds(NAMES, ['py_inv', '{js,py}_*', 'bug1?'], 'f')).toEqual(['bug10', 'js_cart', 'py_inv']);
    expect(() => matchIds(NAMES, ['bug9*'], 'f')).toThrow(/no fixture matches "bug9\*"/);
    expect(() => matchIds(NAMES, ['bug03'], 'f')).toThrow(/unknown fixture: bug03/);
  });

  test("a fixture's folder given as a path (a shell's completion) names its fixture; one outside the fixtures folder is refused, saying how to use it", async () => {
    const root = await tempDir();
    const make = async (dir: string, id: string) => {
      await mkdir(dir, { recursive: true });
      await writeFile(
        path.join(dir, 'fixture.json'),
        JSON.stringify({ id, title: id, language: 'sh', runner: 'exit-code', test: { command: 'true' } }),
      );
    };
    await make(path.join(root, 'fixtures', 'a'), 'a');
    await make(path.join(root, 'fixtures', 'b'), 'b');
    await make(path.join(root, 'elsewhere', 'c'), 'c');
    const roots = { fixturesDir: path.join(root, 'fixtures'), oraclesDir: path.join(root, 'oracles') };
    const picked = await selectFixtures(roots, { patterns: [`${path.join(root, 'fixtures', 'b')}/`, 'a'], tags: [] });
    expect(picked.ids).toEqual(['a', 'b']);
    // Relative to the current folder, as typed.
    const relative = path.relative(process.cwd(), path.join(root, 'fixtures', 'a'));
    expect(idsOfPaths([relative, 'bug0*', 'b'], roots.fixturesDir)).toEqual(['a', 'bug0*', 'b']);
    const outside = path.join(root, 'elsewhere', 'c');
    await expect(selectFixtures(roots, { patterns: [outside], tags: [] })).rejects.toMatchObject({
      code: 'FIXTURE_NOT_FOUND',
      message: expect.stringContaining('is a fixture folder outside the fixtures folder'),
      hint: expect.stringContaining(`--fixtures ${path.join(root, 'elsewhere')}`),
    });
    // A path to nothing in the fixtures folder is an unknown id, listed with the ones there are.
    await expect(selectFixtures(roots, { patterns: [path.join(root, 'fixtures', 'zz')], tags: [] })).rejects.toThrow(/unknown fixture: zz/);
  });

  test('shards split by id order, the same on every call, and together are the whole selection exactly once', () => {
    const ids = Array.from({ length: 11 }, (_, i) => `f${String(i).padStart(2, '0')}`);
    const shuffled = [...ids].reverse();
    for (const count of [1, 2, 3, 11, 15]) {
      const parts = Array.from({ length: count }, (_, i) => shardOf(shuffled, { index: i + 1, count }));
      expect(parts.flat().sort()).toEqual(ids);
      expect(parts.map((p) => p.length).every((n) => Math.abs(n - ids.length / count) < 1)).toBe(true);
    }
    expect(shardOf(ids, { index: 2, count: 3 })).toEqual(['f01', 'f04', 'f07', 'f10']);
  });

  test('tags select from the manifests; a shard records the whole selection it is part of', async () => {
    const root = await tempDir();
    const make = async (id: string, tags: string[]) => {
      await mkdir(path.join(root, 'fixtures', id), { recursive: true });
      await writeFile(
        path.join(root, 'fixtures', id, 'fixture.json'),
        JSON.stringify({ id, title: id, language: 'sh', runner: 'exit-code', test: { command: 'true' }, tags }),
      );
    };
    await make('a', ['fast']);
    await make('b', ['slow']);
    await make('c', ['fast', 'py']);
    const roots = { fixturesDir: path.join(root, 'fixtures'), oraclesDir: path.join(root, 'oracles') };
    const fast = await selectFixtures(roots, { patterns: [], tags: ['fast'] });
    expect(fast.ids).toEqual(['a', 'c']);
    expect(fast.explicit).toBe(true);
    const shard = await selectFixtures(roots, { patterns: [], tags: [], shard: { index: 2, count: 2 } });
    expect(shard.ids).toEqual(['b']);
    expect(shard.shard).toMatchObject({ index: 2, count: 2, of: 3 });
    const other = await selectFixtures(roots, { patterns: [], tags: [], shard: { index: 1, count: 2 } });
    expect(other.shard!.selectionSha256).toBe(shard.shard!.selectionSha256);
    await expect(selectFixtures(roots, { patterns: [], tags: ['gpu'] })).rejects.toThrow(/no selected fixture has the tag gpu/);
    const all = await selectFixtures(roots, { patterns: [], tags: [] });
    expect([all.ids, all.explicit]).toEqual([['a', 'b', 'c'], false]);
  });

  test('a folder without fixture.json is no fixture; an unreadable one is a broken fixture saying why, or FIXTURE_NOT_FOUND when asked for by id', async () => {
    const root = await tempDir();
    const fixturesDir = path.join(root, 'fixtures');
    await mkdir(path.join(fixturesDir, 'a'), { recursive: true });
    await writeFile(
      path.join(fixturesDir, 'a', 'fixture.json'),
      JSON.stringify({ id: 'a', title: 'a', language: 'sh', runner: 'exit-code', test: { command: 'true' } }),
    );
    await mkdir(path.join(fixturesDir, 'notes'), { recursive: true });
    await mkdir(path.join(fixturesDir, 'odd', 'fixture.json'), { recursive: true });
    const scan = await scanFixtures({ fixturesDir, oraclesDir: path.join(root, 'oracles') });
    expect(scan.fixtures.map((f) => f.id)).toEqual(['a']);
    expect(scan.broken.map((b) => [b.id, b.error.code, b.error.message])).toEqual([
      ['odd', 'MANIFEST_INVALID', expect.stringMatching(/odd\/fixture\.json: cannot be read \(.*EISDIR/)],
    ]);
    const byId = await scanFixtures({ fixturesDir, oraclesDir: path.join(root, 'oracles') }, ['notes']);
    expect(byId.broken.map((b) => [b.id, b.error.code])).toEqual([['notes', 'FIXTURE_NOT_FOUND']]);
  });
});
