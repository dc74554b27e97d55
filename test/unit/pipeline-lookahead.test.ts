import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { discoverFixtures } from '../../harness/fixtures/load.js';
import { Lookahead } from '../../harness/pipeline/lookahead.js';
import { SetupCache } from '../../harness/pipeline/setup-cache.js';
import type { SandboxBackend } from '../../harness/sandbox/core/types.js';
import { makeProject } from '../helpers/project.js';
import { MANIFEST } from '../helpers/layer-fixture.js';

describe('the look ahead', () => {
  it("tells the backend in the fixtures' order, whichever tree is read first", async () => {
    // The first fixture's tree takes longest to read: told as each reading ends, it came last.
    const many = Object.fromEntries(Array.from({ length: 1000 }, (_, i) => [`src/f${i}.txt`, `${i}\n`]));
    const project = await makeProject({
      a: { manifest: MANIFEST, files: { 'check.sh': 'true\n', ...many } },
      b: { manifest: MANIFEST, files: { 'check.sh': 'true\n' } },
      c: { manifest: MANIFEST, files: { 'check.sh': 'false\n' } },
    });
    onTestFinished(() => project.cleanup());
    const cacheDir = await mkdtemp(path.join(os.tmpdir(), 'rg-lookahead-'));
    onTestFinished(() => rm(cacheDir, { recursive: true, force: true }));
    const { fixtures } = await discoverFixtures(project);
    const told: string[] = [];
    const withdrawn: string[] = [];
    // Only what the look ahead calls: a backend that may start two sandboxes ahead.
    const backend = {
      name: 'docker',
      startsAhead: 2,
      expectLayer: (spec: { fixtureId: string }) => {
        told.push(spec.fixtureId);
        return () => void withdrawn.push(spec.fixtureId);
      },
    } as unknown as SandboxBackend;
    const lookahead = new Lookahead({
      fixtures,
      backend,
      runId: 'lookahead',
      setupCache: new SetupCache(cacheDir),
      concurrency: 1,
      signal: new AbortController().signal,
    });
    const first = await lookahead.read(0);
    // The first fixture's own announcement is made before it goes on; the next two go with it.
    expect(told[0]).toBe('a');
    expect(first.sha256).toMatch(/^[0-9a-f]{64}$/);
    await lookahead.read(1);
    await lookahead.read(2);
    expect(told).toEqual(['a', 'b', 'c']);
    lookahead.done(0);
    lookahead.done(2);
    expect(withdrawn).toEqual(['a', 'c']);
  });
});
