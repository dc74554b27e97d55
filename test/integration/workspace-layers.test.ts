import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { fingerprintFixture } from '../../harness/fixtures/fingerprint.js';
import { discoverFixtures } from '../../harness/fixtures/load.js';
import { diffTrees } from '../../harness/fixtures/scaffold.js';
import type { FixtureEvent } from '../../harness/pipeline/events.js';
import { FIXTURE_META_FILES } from '../../harness/pipeline/patch-phase.js';
import { SetupCache } from '../../harness/pipeline/setup-cache.js';
import { runSetup } from '../../harness/pipeline/setup.js';
import { layerPlan, saveLayer, startFromLayer } from '../../harness/pipeline/workspace-layer-phase.js';
import type { SandboxBackend } from '../../harness/sandbox/core/types.js';
import { overlayAllowed } from '../../harness/sandbox/host/overlay.js';
import { backendCases } from '../helpers/backends.js';
import { files, layerContext as context, layerProject, snapshotCommand } from '../helpers/layer-fixture.js';
import { selfcheckProject } from '../helpers/project.js';
import { useTempDirs } from '../helpers/temp-dirs.js';

// Copy-on-write layers need root (an overlay mount); CI runs as root and must test them.
if (process.env.CI && !overlayAllowed()) throw new Error('CI must run the prepared-layer tests as root (overlay mounts)');

const tempDir = useTempDirs('rg-layers-');

const SNAPSHOT = snapshotCommand();

const hostCases = (await backendCases()).filter((c) => c.name === 'local' || c.name === 'bwrap');

/** A hash of every entry of a host folder (names, modes, link targets, contents). */
const treeHash = (dir: string) => execFileSync('sh', ['-c', SNAPSHOT], { cwd: dir, encoding: 'utf8' });

const overlaysOver = (dir: string) =>
  readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .filter((l) => l.includes(dir));

describe.each(hostCases)('prepared layers on $name', ({ make }) => {
  test.runIf(overlayAllowed())(
    'a layer is the uploaded and set-up workspace; a sandbox over it never changes it; one in use is never pruned',
    async () => {
      const cacheDir = await tempDir();
      const project = await layerProject();
      const fixture = (await discoverFixtures(project)).fixtures[0]!;
      const sha = await fingerprintFixture(fixture);
      const cache = new SetupCache(cacheDir);
      const backend: SandboxBackend = await make();

      const first = await backend.create({ runId: 'layers', fixtureId: 'big' });
      const firstEvents: FixtureEvent[] = [];
      let uploadedSnapshot: string;
      try {
        const ctx = context(fixture, first, cache, firstEvents);
        const stats = await first.uploadDir(fixture.dir, { skip: FIXTURE_META_FILES });
        expect(await runSetup(ctx)).toBeNull();
        const plan = (await layerPlan(ctx, sha))!;
        await saveLayer(ctx, plan, stats);
        uploadedSnapshot = (await first.exec(SNAPSHOT)).stdout;
      } finally {
        await first.destroy();
      }
      expect(firstEvents).toContainEqual(expect.objectContaining({ type: 'cache', hit: false, layer: true }));
      const [layer] = await cache.layers!.list();
      const layerTree = path.join(layer!.dir, 'tree');
      const before = treeHash(layerTree);

      const second = await backend.create({ runId: 'layers', fixtureId: 'big' });
      const ctx = context(fixture, second, cache, []);
      const started = await startFromLayer(ctx, (await layerPlan(ctx, sha))!);
      try {
        expect(started).not.toBeNull();
        expect((await second.exec(SNAPSHOT)).stdout).toBe(uploadedSnapshot);
        const changed = await second.exec(
          'echo x > gen/f1 && rm gen/f2 && chmod 777 out && echo new > added.txt && rm -rf out/empty && echo ok',
        );
        expect(changed.stdout).toBe('ok\n');
        expect(await cache.layers!.prune({ all: true })).toEqual([]);
        expect((await cache.layers!.list()).map((l) => l.inUse)).toEqual([true]);
      } finally {
        await second.destroy();
        started?.release();
      }
      expect(treeHash(layerTree)).toBe(before);
      expect(overlaysOver(layerTree)).toEqual([]);
      expect((await cache.layers!.prune({ all: true })).map((l) => l.name)).toEqual([layer!.name]);
    },
  );

  test.runIf(overlayAllowed())('the second selfcheck starts from the layer: no upload, no setup, the same verdicts', async () => {
    const cacheDir = await tempDir();
    const project = await layerProject(await diffTrees(files, { 'add.sh': 'echo $(( $1 + $2 ))\n' }));
    const cache = new SetupCache(cacheDir);
    const backend = await make();
    const outcome = (r: { byId: Record<string, { verdict: string; red: unknown; green: unknown }> }) => ({
      verdict: r.byId.big!.verdict,
      red: r.byId.big!.red,
      green: r.byId.big!.green,
    });
    const uncached = await selfcheckProject(project, { backend });
    const making = await selfcheckProject(project, { backend, setupCache: cache });
    const fromLayer = await selfcheckProject(project, { backend, setupCache: cache });
    expect(making.events.map((e) => e.event)).toContainEqual(expect.objectContaining({ type: 'cache', hit: false, layer: true }));
    const events = fromLayer.events.map((e) => e.event);
    expect(events).toContainEqual(expect.objectContaining({ type: 'upload', layer: expect.any(String) }));
    expect(events).toContainEqual(expect.objectContaining({ type: 'cache', hit: true, layer: true }));
    expect(events.filter((e) => e.type === 'command' && e.phase === 'setup')).toEqual([]);
    const strip = (o: ReturnType<typeof outcome>) =>
      JSON.parse(JSON.stringify(o, (k, v) => (k === 'durationMs' ? undefined : v))) as unknown;
    expect(outcome(uncached).verdict).toBe('valid');
    expect(strip(outcome(fromLayer))).toEqual(strip(outcome(uncached)));
    expect(strip(outcome(making))).toEqual(strip(outcome(uncached)));
    expect(overlaysOver(cacheDir)).toEqual([]);
  });
});
