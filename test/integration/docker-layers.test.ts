import { randomBytes } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import type Docker from 'dockerode';
import { describe, expect, onTestFinished, test } from 'vitest';
import { fingerprintFixture } from '../../harness/fixtures/fingerprint.js';
import { discoverFixtures } from '../../harness/fixtures/load.js';
import { diffTrees } from '../../harness/fixtures/scaffold.js';
import type { FixtureEvent } from '../../harness/pipeline/events.js';
import { FIXTURE_META_FILES } from '../../harness/pipeline/patch-phase.js';
import { SetupCache } from '../../harness/pipeline/setup-cache.js';
import { runSetup } from '../../harness/pipeline/setup.js';
import { runFixtures } from '../../harness/pipeline/scheduler.js';
import { oracleProvider } from '../../harness/agents/static.js';
import { layerPlan, saveLayer, startFromLayer } from '../../harness/pipeline/workspace-layer-phase.js';
import { dockerClient } from '../../harness/sandbox/docker/client.js';
import { DockerBackend } from '../../harness/sandbox/docker/backend.js';
import { LABEL } from '../../harness/sandbox/docker/labels.js';
import { collectGarbage } from '../../harness/sandbox/docker/gc.js';
import { evictLayers, layerVolume, listLayers, markLayerUse, pruneLayers } from '../../harness/sandbox/docker/layers.js';
import { podmanClient } from '../../harness/sandbox/podman/client.js';
import { dockerTestOptions, dockerUnavailableReason } from '../helpers/backends-docker.js';
import { runCli } from '../helpers/cli.js';
import { files, layerContext as context, layerProject, MANIFEST, saveSmallLayer, snapshotCommand } from '../helpers/layer-fixture.js';
import { makeProject, selfcheckProject, type InlineFixture } from '../helpers/project.js';
import { useTempDirs } from '../helpers/temp-dirs.js';

const unavailable = dockerUnavailableReason();
if (unavailable && process.env.CI) throw new Error(`CI must run the Docker backend's tests: ${unavailable}`);

const tempDir = useTempDirs('rg-dlayers-');

const SNAPSHOT = snapshotCommand(true);

const engines: { name: string; client: () => Docker }[] = [
  { name: 'docker', client: dockerClient },
  // Podman speaks the same API; it runs here when its socket is up (CI starts it).
  ...(process.env.CONTAINER_HOST || process.env.CI ? [{ name: 'podman', client: podmanClient }] : []),
];

/** Sandbox volumes of this backend session still on the engine (a layer carries no session). */
async function sessionVolumes(docker: Docker, backend: DockerBackend): Promise<string[]> {
  const list = await docker.listVolumes({ filters: { label: [`${LABEL.session}=${backend.session}`] } });
  return (list.Volumes ?? []).map((v) => v.Name);
}

describe.skipIf(unavailable).each(engines)('prepared layers on $name', ({ name, client }) => {
  test('the workspace is kept once in a layer volume; sandboxes over it start with it, change only their own copy, within the disk limit', async () => {
    const docker = client();
    const cacheDir = await tempDir();
    const project = await layerProject();
    const fixture = (await discoverFixtures(project)).fixtures[0]!;
    const sha = await fingerprintFixture(fixture);
    const cache = new SetupCache(cacheDir);
    const backend = new DockerBackend(
      dockerTestOptions({ runId: 'docker-layers', limits: { diskBytes: 64 * 1024 ** 2 }, ...(name === 'podman' ? { docker, name } : {}) }),
    );
    let key: string | undefined;
    try {
      const first = await backend.create({ runId: 'docker-layers', fixtureId: 'big' });
      const events: FixtureEvent[] = [];
      let uploaded: string;
      try {
        const ctx = context(fixture, first, cache, events);
        const plan = (await layerPlan(ctx, sha))!;
        key = plan.key;
        // No such layer: the workspace is left empty for the upload.
        expect(await first.startLayer!(`${plan.key}-missing`)).toBeNull();
        expect((await first.exec('ls -A /workspace')).stdout).toBe('');
        const stats = await first.uploadDir(fixture.dir, { skip: FIXTURE_META_FILES });
        expect(await runSetup(ctx)).toBeNull();
        uploaded = (await first.exec(SNAPSHOT)).stdout;
        await saveLayer(ctx, plan, stats);
      } finally {
        await first.destroy();
      }
      expect(events).toContainEqual(expect.objectContaining({ type: 'cache', hit: false, layer: true }));
      const [layer] = (await listLayers(docker, cache.layers!.scope)).filter((l) => l.key === key);
      expect(layer).toMatchObject({ name: layerVolume(key), fixture: 'big' });
      expect(layer!.bytes).toBeGreaterThan(1200 * 2);

      const [a, b] = await Promise.all([0, 1].map(() => backend.create({ runId: 'docker-layers', fixtureId: 'big' })));
      try {
        const ctxA = context(fixture, a!, cache, []);
        const started = await startFromLayer(ctxA, (await layerPlan(ctxA, sha))!);
        expect(started?.bytes).toBe(layer!.bytes);
        // The same files, owned by the sandbox user (uid 1000) as uploaded ones are.
        expect((await a!.exec(SNAPSHOT)).stdout).toBe(uploaded);
        const changed = await a!.exec(
          'echo x > gen/f1 && rm gen/f2 && chmod 777 out && echo new > added.txt && rm -rf out/empty && echo ok',
        );
        expect(changed.stdout).toBe('ok\n');
        // The disk limit holds over a layer: what a sandbox writes goes into its own sized tmpfs
        // (where the engine sizes volumes at all: Podman before 4.4 does not, see sandbox-limits).
        if (backend.sizedVolumes) {
          const full = await a!.exec('head -c 100000000 /dev/zero > big.bin');
          expect(full.exitCode).not.toBe(0);
          expect(full.stderr).toMatch(/No space left/);
        }
        // A layer a sandbox stands on cannot be removed under it.
        await expect(docker.getVolume(layerVolume(key)).remove()).rejects.toThrow();

        const ctxB = context(fixture, b!, cache, []);
        expect(await startFromLayer(ctxB, (await layerPlan(ctxB, sha))!)).not.toBeNull();
        expect((await b!.exec(SNAPSHOT)).stdout).toBe(uploaded);
      } finally {
        await Promise.all([a!.destroy(), b!.destroy()]);
      }
      // A third sandbox sees the layer as it was made: the changes above stayed in their sandbox.
      const c = await backend.create({ runId: 'docker-layers', fixtureId: 'big' });
      try {
        const ctxC = context(fixture, c, cache, []);
        expect(await startFromLayer(ctxC, (await layerPlan(ctxC, sha))!)).not.toBeNull();
        expect((await c.exec(SNAPSHOT)).stdout).toBe(uploaded);
      } finally {
        await c.destroy();
      }
    } finally {
      await backend.close();
      if (key)
        await docker
          .getVolume(layerVolume(key))
          .remove()
          .catch(() => undefined);
    }
    expect(await sessionVolumes(docker, backend)).toEqual([]);
    expect(await listLayers(docker, new SetupCache(cacheDir).layers!.scope)).toEqual([]);
  });

  test('gc removes the layers whose cache folder is gone, and keeps the others', async () => {
    const docker = client();
    const backend = new DockerBackend(dockerTestOptions({ runId: 'docker-layers', ...(name === 'podman' ? { docker, name } : {}) }));
    const [gone, kept] = [await tempDir(), await tempDir()];
    const scope = `test-${randomBytes(4).toString('hex')}`;
    try {
      const sb = await backend.create({ runId: 'docker-layers', fixtureId: 'orphan' });
      try {
        await sb.writeFiles([{ path: 'a.txt', content: 'a\n' }]);
        for (const [i, dir] of [gone, kept].entries())
          expect(await sb.saveLayer!(`${scope}-${i}`, { fixture: 'orphan', maxBytes: 1024 ** 3, scope, cacheDir: dir })).toBeNull();
      } finally {
        await sb.destroy();
      }
      await rm(gone, { recursive: true, force: true });
      const report = await collectGarbage(docker);
      expect(report.removed.map((r) => r.name)).toContain(layerVolume(`${scope}-0`));
      expect((await listLayers(docker, scope)).map((l) => l.key)).toEqual([`${scope}-1`]);
    } finally {
      await backend.close();
      await pruneLayers(docker, scope, { all: true });
    }
  });

  test('eviction takes the least recently used layer: a start from one counts as its use', async () => {
    const docker = client();
    const backend = new DockerBackend(dockerTestOptions({ runId: 'docker-layers', ...(name === 'podman' ? { docker, name } : {}) }));
    const cacheDir = await tempDir();
    const scope = `test-${randomBytes(4).toString('hex')}`;
    const [older, newer] = [`${scope}-0`, `${scope}-1`];
    try {
      const sb = await backend.create({ runId: 'docker-layers', fixtureId: 'lru' });
      try {
        await sb.writeFiles([{ path: 'a.txt', content: 'a\n' }]);
        for (const key of [older, newer])
          expect(await sb.saveLayer!(key, { fixture: 'lru', maxBytes: 1024 ** 3, scope, cacheDir })).toBeNull();
      } finally {
        await sb.destroy();
      }
      // Each saved layer is noted in its cache folder; another cache folder does not ask the engine for it.
      for (const key of [older, newer]) expect(existsSync(path.join(cacheDir, 'engine-uses', key))).toBe(true);
      const user = await backend.create({ runId: 'docker-layers', fixtureId: 'lru' });
      try {
        expect(await user.startLayer!(older, { cacheDir: await tempDir() })).toBeNull();
        expect(await user.startLayer!(older, { cacheDir })).not.toBeNull();
        expect((await user.exec('cat a.txt')).stdout).toBe('a\n');
      } finally {
        await user.destroy();
      }
      expect((await listLayers(docker, scope)).map((l) => l.key)).toEqual([newer, older]);
      const [one] = await listLayers(docker, scope);
      const evicted = await evictLayers(docker, scope, one!.bytes);
      expect(evicted.map((l) => l.key)).toEqual([newer]);
      expect((await listLayers(docker, scope)).map((l) => l.key)).toEqual([older]);
    } finally {
      await backend.close();
      await pruneLayers(docker, scope, { all: true });
    }
  });

  test('with --pool, a sandbox announced ahead (expectLayer) takes a container started over its layer before it asked', async () => {
    const docker = client();
    const backend = new DockerBackend(
      dockerTestOptions({ runId: 'docker-ahead', pool: 2, ...(name === 'podman' ? { docker, name } : {}) }),
    );
    const cacheDir = await tempDir();
    const scope = `test-${randomBytes(4).toString('hex')}`;
    const spec = { runId: 'docker-ahead', fixtureId: 'ahead' };
    try {
      await backend.open('docker-ahead');
      const key = await saveSmallLayer(backend, spec, { scope, cacheDir });
      // Noted in the cache but not on the engine (evicted meanwhile): nothing to start, and nothing breaks.
      markLayerUse(cacheDir, `${scope}-gone`);
      backend.expectLayer!(spec, { key: `${scope}-gone`, cacheDir });
      backend.expectLayer!(spec, { key, cacheDir });
      // Withdrawn (its fixture ended without asking): what was started for it is removed.
      backend.expectLayer!(spec, { key, cacheDir })();
      const ahead = await backend.create(spec);
      try {
        expect(await ahead.startLayer!(`${scope}-gone`, { cacheDir })).toBeNull();
        expect(await ahead.startLayer!(key, { cacheDir })).toMatchObject({ ahead: true });
        expect((await ahead.exec('cat a.txt && echo b > a.txt && cat a.txt')).stdout).toBe('a\nb\n');
      } finally {
        await ahead.destroy();
      }
      // Not announced: its own container over the layer, which the sandbox before did not change.
      const own = await backend.create(spec);
      try {
        const started = await own.startLayer!(key, { cacheDir });
        expect(started).not.toBeNull();
        expect(started!.ahead).toBeUndefined();
        expect((await own.exec('cat a.txt')).stdout).toBe('a\n');
      } finally {
        await own.destroy();
      }
    } finally {
      await backend.close();
      await pruneLayers(docker, scope, { all: true });
    }
    expect(await sessionVolumes(docker, backend)).toEqual([]);
    const left = await docker.listContainers({ all: true, filters: { label: [`${LABEL.session}=${backend.session}`] } });
    expect(left).toEqual([]);
  });

  // As root on the engine's host: the test takes the volume's mount away on the host, as slirp4netns's sandbox once did.
  // Docker only: Podman here makes plain-folder volumes (it refuses their size, see sandbox-limits), with no mount to lose.
  if (name === 'docker')
    test.skipIf(process.getuid?.() !== 0)(
      'a copy that does not see the workspace the sandbox sees (its volume unmounted on the host) keeps no layer',
      async () => {
        const docker = client();
        const backend = new DockerBackend(dockerTestOptions({ runId: 'docker-layers' }));
        const cacheDir = await tempDir();
        const scope = `test-${randomBytes(4).toString('hex')}`;
        try {
          const sb = await backend.create({ runId: 'docker-layers', fixtureId: 'unmounted' });
          try {
            await sb.writeFiles([{ path: 'a.txt', content: 'a\n' }]);
            const ws = (await sessionVolumes(docker, backend)).find((v) => v.endsWith('-ws'))!;
            const { Mountpoint } = await docker.getVolume(ws).inspect();
            expect(readFileSync('/proc/self/mountinfo', 'utf8')).toContain(` ${Mountpoint} `);
            execFileSync('umount', [Mountpoint]);
            const why = await sb.saveLayer!(`${scope}-0`, { fixture: 'unmounted', maxBytes: 1024 ** 3, scope, cacheDir });
            expect(why).toMatch(/does not see the sandbox's workspace/);
            expect(await listLayers(docker, scope)).toEqual([]);
            // The sandbox itself still has its files: only the host's view went.
            expect((await sb.exec('cat a.txt')).stdout).toBe('a\n');
          } finally {
            await sb.destroy();
          }
        } finally {
          await backend.close();
          await pruneLayers(docker, scope, { all: true });
        }
        expect(await sessionVolumes(docker, backend)).toEqual([]);
      },
    );

  test("a run with --pool starts the next fixtures' containers over their layers while the one before runs", async () => {
    const docker = client();
    const cache = new SetupCache(await tempDir());
    const big: InlineFixture = { manifest: MANIFEST, files, oracle: await diffTrees(files, { 'add.sh': 'echo $(( $1 + $2 ))\n' }) };
    const project = await makeProject({ a: big, b: big, c: big });
    onTestFinished(() => project.cleanup());
    const backends: DockerBackend[] = [];
    /** One selfcheck, one fixture at a time, as `selfcheck -j 1 --pool 1` runs it (open → run → close). */
    const selfcheck = async () => {
      const backend = new DockerBackend(
        dockerTestOptions({ runId: 'docker-ahead-run', pool: 1, ...(name === 'podman' ? { docker, name } : {}) }),
      );
      backends.push(backend);
      const events: { id: string; event: FixtureEvent }[] = [];
      await backend.open('docker-ahead-run');
      try {
        const outcome = await runFixtures({
          ...(await discoverFixtures(project)),
          backend,
          runId: 'docker-ahead-run',
          mode: 'selfcheck',
          provider: oracleProvider,
          concurrency: 1,
          repeat: 1,
          retryBaseMs: 10,
          signal: new AbortController().signal,
          setupCache: cache,
          observer: { onEvent: (id, event) => events.push({ id, event }) },
        });
        return {
          verdicts: outcome.results.map((r) => `${r.fixtureId} ${r.verdict}${r.verdict === 'valid' ? '' : `: ${r.reason}`}`),
          events,
        };
      } finally {
        await backend.close();
      }
    };
    const uploads = (events: { id: string; event: FixtureEvent }[]) =>
      events.flatMap(({ id, event: e }) =>
        e.type === 'upload' ? [`${id} ${e.layer ? 'layer' : 'upload'}${e.ahead ? ' ahead' : ''}`] : [],
      );
    try {
      // The first run makes the layers: none is there to start ahead from.
      const making = await selfcheck();
      expect(making.verdicts).toEqual(['a valid', 'b valid', 'c valid']);
      expect(uploads(making.events)).toEqual(['a upload', 'b upload', 'c upload']);
      // The second: each fixture's container was started over its layer before its sandbox asked
      // (the first's as it began, the next as the one before began, one at a time), and no setup ran.
      const ahead = await selfcheck();
      expect(ahead.verdicts).toEqual(['a valid', 'b valid', 'c valid']);
      expect(uploads(ahead.events)).toEqual(['a layer ahead', 'b layer ahead', 'c layer ahead']);
      expect(ahead.events.filter(({ event: e }) => e.type === 'command' && e.phase === 'setup')).toEqual([]);
    } finally {
      await pruneLayers(docker, cache.layers!.scope, { all: true });
    }
    for (const backend of backends) {
      expect(await sessionVolumes(docker, backend)).toEqual([]);
      expect(await docker.listContainers({ all: true, filters: { label: [`${LABEL.session}=${backend.session}`] } })).toEqual([]);
    }
  });

  test('the second selfcheck starts from the layer: no upload, no setup, the same verdicts', async () => {
    const docker = client();
    const cacheDir = await tempDir();
    const project = await layerProject(await diffTrees(files, { 'add.sh': 'echo $(( $1 + $2 ))\n' }));
    // The cache the CLI finds with XDG_CACHE_HOME=cacheDir.
    const cache = SetupCache.under(path.join(cacheDir, 'redgreen'));
    const backend = new DockerBackend(dockerTestOptions({ runId: 'docker-layers', ...(name === 'podman' ? { docker, name } : {}) }));
    try {
      const outcome = (r: { byId: Record<string, { verdict: string; red: unknown; green: unknown }> }) =>
        JSON.parse(
          JSON.stringify([r.byId.big!.verdict, r.byId.big!.red, r.byId.big!.green], (k, v) => (k === 'durationMs' ? undefined : v)),
        ) as unknown;
      const uncached = await selfcheckProject(project, { backend });
      const making = await selfcheckProject(project, { backend, setupCache: cache });
      const fromLayer = await selfcheckProject(project, { backend, setupCache: cache });
      expect(making.events.map((e) => e.event)).toContainEqual(expect.objectContaining({ type: 'cache', hit: false, layer: true }));
      const events = fromLayer.events.map((e) => e.event);
      expect(events).toContainEqual(expect.objectContaining({ type: 'upload', layer: expect.any(String) }));
      expect(events.filter((e) => e.type === 'command' && e.phase === 'setup')).toEqual([]);
      expect(outcome(uncached)).toEqual(expect.arrayContaining(['valid']));
      expect(outcome(fromLayer)).toEqual(outcome(uncached));
      expect(outcome(making)).toEqual(outcome(uncached));
      // `cache list` shows it beside the host's entries, as the engine's.
      const listed = await runCli(['cache', 'list', '--json'], { env: { XDG_CACHE_HOME: cacheDir } });
      const made = await listLayers(docker, cache.layers!.scope);
      expect(made).toHaveLength(1);
      expect((JSON.parse(listed.stdout) as { layers: unknown[] }).layers).toContainEqual(
        expect.objectContaining({ kind: 'layer', key: made[0]!.key, fixture: 'big', engine: name, bytes: made[0]!.bytes }),
      );
    } finally {
      await backend.close();
      // Layers of this test's own cache only: the engine's others are not this test's.
      expect((await runCli(['cache', 'prune', '--all'], { env: { XDG_CACHE_HOME: cacheDir } })).code).toBe(0);
    }
    expect(await listLayers(docker, cache.layers!.scope)).toEqual([]);
    expect(await sessionVolumes(docker, backend)).toEqual([]);
  });
});
