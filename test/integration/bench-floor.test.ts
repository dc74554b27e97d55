import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { REPO } from '../helpers/cli.js';

// The built bench (npm test builds first): floor-harness.js is found beside trivial.js in dist/bench.
type Trivial = typeof import('../../harness/bench/trivial.js');
const load = (): Promise<Trivial> => import(pathToFileURL(path.join(REPO, 'dist/bench/trivial.js')).href) as Promise<Trivial>;

// What the bench's "minimal Node harness" line rests on: it does the fixtures' work, and only that.
describe.skipIf(process.platform !== 'linux')('the bench’s minimal Node.js harness', () => {
  let bench: Trivial;
  let set: Awaited<ReturnType<Trivial['makeTrivialFixtures']>>;
  beforeAll(async () => {
    bench = await load();
    set = await bench.makeTrivialFixtures(4);
  });
  afterAll(() => bench?.removeTrivial(set));

  test('takes each trivial fixture RED, applies its oracle, GREEN, and measures its own CPU', async () => {
    const m = await bench.floorTrivial(set, 2);
    expect(m.exitCode).toBe(0);
    expect(m.selfCpuMs).toBeGreaterThan(0);
    // The kernel's part of it: a process that spawned commands and copied files made system calls.
    expect(m.selfSystemMs).toBeGreaterThan(0);
    expect(m.selfSystemMs).toBeLessThanOrEqual(m.selfCpuMs);
    // Its commands (sh, git apply) are its children: counted in the tree's CPU, not its own.
    expect(m.treeCpuMs).toBeGreaterThan(m.selfCpuMs);
  });

  test('a fixture whose work does not go RED → applied → GREEN fails the measurement, saying how to see why', async () => {
    await writeFile(path.join(set.root, 'oracles', `${set.ids[2]}.patch`), 'not a patch\n');
    await expect(bench.floorTrivial(set, 2)).rejects.toThrow(/floor-harness\.js exited with 1 before measuring itself; run it by hand/);
  });
});
