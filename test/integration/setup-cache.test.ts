import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import tar from 'tar-stream';
import { afterEach, describe, expect, test } from 'vitest';
import { discoverFixtures, type Fixture } from '../../harness/fixtures/load.js';
import { diffTrees } from '../../harness/fixtures/scaffold.js';
import type { FixtureEvent } from '../../harness/pipeline/events.js';
import { FIXTURE_META_FILES } from '../../harness/pipeline/patch-phase.js';
import type { FixtureResult } from '../../harness/pipeline/result.js';
import { checkArchive } from '../../harness/pipeline/setup-archive.js';
import { SetupCache } from '../../harness/pipeline/setup-cache.js';
import { runSetup } from '../../harness/pipeline/setup.js';
import type { SandboxBackend } from '../../harness/sandbox/core/types.js';
import { LocalBackend } from '../../harness/sandbox/host/local.js';
import { backendCases } from '../helpers/backends.js';
import { makeProject, selfcheckProject, type Project } from '../helpers/project.js';

let project: Project | undefined;
let cacheDir: string | undefined;
afterEach(async () => {
  await project?.cleanup();
  if (cacheDir) await rm(cacheDir, { recursive: true, force: true });
  project = undefined;
});

// Setup "installs" a dependency (a file the test reads) and counts how often it ran. The test is a
// shell check (the exit-code runner): the cache is what is tested here, not a runner.
const SETUP = { commands: ['mkdir -p deps && echo 5 > deps/value && date +%s%N >> deps/installed-at'], timeoutSec: 30 };
const CHECK = { runner: 'exit-code', language: 'shell', test: { command: 'sh check.sh', timeoutSec: 30 }, protected: ['check.sh'] };
const ADD_SH = 'echo $(( $1 - $2 ))\n';

describe.each(await backendCases())('setup cache on $name', ({ make }) => {
  test('the second run unpacks the cached setup instead of running it; a lockfile change invalidates it', async () => {
    cacheDir = await mkdtemp(path.join(os.tmpdir(), 'rg-cache-'));
    const files = { 'add.sh': ADD_SH, 'check.sh': 'test "$(sh add.sh 2 3)" = "$(cat deps/value)"\n', 'requirements.txt': 'dep==1\n' };
    project = await makeProject({
      c: { manifest: { ...CHECK, setup: SETUP }, files, oracle: await diffTrees(files, { 'add.sh': 'echo $(( $1 + $2 ))\n' }) },
    });
    // The entry itself is under test: no prepared layer (which would skip its unpacking on host backends).
    const cache = new SetupCache(cacheDir, { layers: false });
    const backend = await make();
    const cacheEvents = async () => {
      const { byId, events } = await selfcheckProject(project!, { setupCache: cache, backend });
      expect(byId.c!.verdict).toBe('valid');
      return events.flatMap((e) => (e.event.type === 'cache' ? [e.event] : []));
    };
    expect(await cacheEvents()).toMatchObject([{ hit: false, paths: ['deps'] }]);
    expect(await cacheEvents()).toMatchObject([{ hit: true }]);
    await writeFile(path.join(project.fixturesDir, 'c/requirements.txt'), 'dep==2\n');
    expect(await cacheEvents()).toMatchObject([{ hit: false }]);
  });
});

// Setup makes every kind of change: a file in a folder the fixture has, a folder's mode, a changed
// tracked file, a removed file, a chmod, a symlink, an empty folder, a folder replaced by a file.
const EVERY_CHANGE = {
  commands: [
    'mkdir -p deps out/empty && echo 5 > deps/value',
    'echo 1.2.3 > pkg/version.txt && chmod 700 pkg',
    'echo mode=built > config.txt && rm stale.txt && chmod +x tool.sh',
    'ln -s ../config.txt pkg/link && rm -rf gen && echo generated > gen',
  ],
  timeoutSec: 60,
};
// One && chain: its exit status is the first failing check's (set -e would ignore all but the last of a chain).
const EVERY_CHECK = `${[
  'test "$(cat pkg/version.txt)" = 1.2.3 && test "$(stat -c %a pkg)" = 700 && test "$(cat pkg/init.txt)" = init',
  'test "$(cat config.txt)" = mode=built && test ! -e stale.txt && test -x tool.sh',
  'test -L pkg/link && test "$(cat pkg/link)" = mode=built && test -d out/empty && test -f gen',
  'test "$(sh add.sh 2 3)" = "$(cat deps/value)"',
].join(' &&\n')}\n`;
const everyFiles = {
  'add.sh': ADD_SH,
  'check.sh': EVERY_CHECK,
  'requirements.txt': 'dep==1\n',
  'pkg/init.txt': 'init\n',
  'config.txt': 'mode=dev\n',
  'stale.txt': 'old\n',
  'tool.sh': 'echo tool\n',
  'gen/a.txt': 'a folder setup replaces by a file\n',
};

// Every entry of the workspace (type, mode, symlink target, content hash), mtimes aside.
const SNAPSHOT =
  "find . -mindepth 1 \\( -type l -printf '%y %P -> %l\\n' \\) -o -printf '%y %m %P\\n' | sort && find . -type f -exec sha256sum {} + | sort";

/** Uploads the fixture into a fresh sandbox, runs setup (cached or not), and describes the workspace. */
async function setUp(backend: SandboxBackend, fixture: Fixture, cache: SetupCache | null) {
  const sandbox = await backend.create({ runId: 'setup-cache-test', fixtureId: fixture.id });
  try {
    const events: FixtureEvent[] = [];
    await sandbox.uploadDir(fixture.dir, { skip: FIXTURE_META_FILES });
    const ctx = { fixture, sandbox, signal: new AbortController().signal, emit: (e: FixtureEvent) => events.push(e), setupCache: cache };
    expect(await runSetup(ctx)).toBeNull();
    const snap = await sandbox.exec(SNAPSHOT);
    expect(snap.exitCode).toBe(0);
    return { snapshot: snap.stdout, events, workdir: sandbox.workdir };
  } finally {
    await sandbox.destroy();
  }
}

const cacheOf = (events: FixtureEvent[]) => events.flatMap((e) => (e.type === 'cache' ? [{ hit: e.hit, paths: e.paths }] : []));
const outcome = (r: FixtureResult) => ({ verdict: r.verdict, reason: r.reason, red: r.red?.tests, green: r.green?.tests });

describe.each(await backendCases())('a cached setup is the uncached one on $name', ({ make }) => {
  test('every change setup makes comes back: same workspace, same verdicts', async () => {
    cacheDir = await mkdtemp(path.join(os.tmpdir(), 'rg-cache-'));
    project = await makeProject({
      every: {
        manifest: { ...CHECK, setup: EVERY_CHANGE },
        files: everyFiles,
        oracle: await diffTrees(everyFiles, { 'add.sh': 'echo $(( $1 + $2 ))\n' }),
      },
    });
    const backend = await make();
    const cache = new SetupCache(cacheDir);
    const [fixture] = (await discoverFixtures(project)).fixtures;

    const uncached = await setUp(backend, fixture!, null);
    const stored = await setUp(backend, fixture!, cache);
    const restored = await setUp(backend, fixture!, cache);
    expect([...stored.events, ...restored.events].filter((e) => e.type === 'error')).toEqual([]);
    expect(cacheOf(stored.events)).toEqual([{ hit: false, paths: ['config.txt', 'deps', 'gen', 'out', 'pkg', 'tool.sh'] }]);
    expect(cacheOf(restored.events)).toMatchObject([{ hit: true }]);
    expect(uncached.snapshot).toContain('l pkg/link -> ../config.txt');
    expect(stored.snapshot).toBe(uncached.snapshot);
    expect(restored.snapshot).toBe(uncached.snapshot);

    const runs = [];
    for (const setupCache of [undefined, cache, cache])
      runs.push(await selfcheckProject(project, { backend, ...(setupCache ? { setupCache } : {}) }));
    expect(runs.map((r) => `${r.byId.every!.verdict}: ${r.byId.every!.error?.message ?? ''}`)).toEqual(Array(3).fill('valid: '));
    expect(runs[2]!.events.some((e) => e.event.type === 'cache' && e.event.hit)).toBe(true);
    expect(outcome(runs[1]!.byId.every!)).toEqual(outcome(runs[0]!.byId.every!));
    expect(outcome(runs[2]!.byId.every!)).toEqual(outcome(runs[0]!.byId.every!));
  });

  test('a setup that writes the workspace path is reused only where the workspace has that path', async () => {
    cacheDir = await mkdtemp(path.join(os.tmpdir(), 'rg-cache-'));
    const files = { 'add.sh': ADD_SH, 'check.sh': 'test "$(cat where.txt)" = "$(pwd)" && test "$(sh add.sh 2 3)" = 5\n' };
    project = await makeProject({
      bound: {
        manifest: { ...CHECK, setup: { commands: ['pwd > where.txt'], timeoutSec: 30 } },
        files,
        oracle: await diffTrees(files, { 'add.sh': 'echo $(( $1 + $2 ))\n' }),
      },
    });
    const backend = await make();
    const cache = new SetupCache(cacheDir);
    const [fixture] = (await discoverFixtures(project)).fixtures;
    const runs = [];
    for (let i = 0; i < 3; i++) runs.push(await setUp(backend, fixture!, cache));
    const samePath = runs[0]!.workdir === runs[1]!.workdir;
    expect(cacheOf(runs[1]!.events)).toMatchObject(samePath ? [{ hit: true }] : []);
    for (const r of runs) expect(r.snapshot).toMatch(/^f \d+ where\.txt$/m);
    if (!samePath) {
      // The path differs per sandbox: after one mismatch, nothing of this fixture is kept.
      expect(runs[2]!.events).toContainEqual(expect.objectContaining({ type: 'error', code: 'SETUP_CACHE' }));
      expect((await cache.list()).filter((e) => e.meta?.fixture === 'bound').map((e) => e.meta?.unstable)).toEqual([true]);
    }
    const { byId } = await selfcheckProject(project, { backend, setupCache: cache });
    expect(byId.bound!.verdict).toBe('valid');
  });
});

describe('setup cache entries', () => {
  const local = new LocalBackend();
  const blobFixture = async (id: string, extra: Record<string, unknown> = {}) => {
    const files = { 'add.sh': ADD_SH, 'check.sh': 'test -s deps/blob\n' };
    const p = await makeProject({
      [id]: {
        manifest: { ...CHECK, setup: { commands: ['mkdir deps && head -c 100000 /dev/urandom > deps/blob'], timeoutSec: 30 }, ...extra },
        files,
      },
    });
    projects.push(p);
    return (await discoverFixtures(p)).fixtures[0]!;
  };
  const projects: Project[] = [];
  afterEach(async () => {
    await Promise.all(projects.splice(0).map((p) => p.cleanup()));
  });

  test('the least recently used entry is evicted when the cache exceeds its cap; a hit counts as a use', async () => {
    cacheDir = await mkdtemp(path.join(os.tmpdir(), 'rg-cache-'));
    const cache = new SetupCache(cacheDir, { maxBytes: 250_000 });
    const [a, b, c] = [await blobFixture('a'), await blobFixture('b'), await blobFixture('c')];
    const fixturesIn = async () => (await cache.list()).map((e) => e.meta?.fixture).sort();
    await setUp(local, a, cache);
    await setUp(local, b, cache);
    expect(await fixturesIn()).toEqual(['a', 'b']);
    expect(cacheOf((await setUp(local, a, cache)).events)).toMatchObject([{ hit: true }]);
    await setUp(local, c, cache);
    expect(await fixturesIn()).toEqual(['a', 'c']);
    expect(cacheOf((await setUp(local, b, cache)).events)).toMatchObject([{ hit: false }]);
    expect(await fixturesIn()).toEqual(['b', 'c']);

    const tiny = new SetupCache(cacheDir, { maxBytes: 1000 });
    const { events } = await setUp(local, a, tiny);
    expect(events).toContainEqual(
      expect.objectContaining({ type: 'error', message: expect.stringContaining("larger than the cache's cap") }),
    );
  });

  test('a fixture file the cached setup replaced has changed since: the entry is not used', async () => {
    cacheDir = await mkdtemp(path.join(os.tmpdir(), 'rg-cache-'));
    const cache = new SetupCache(cacheDir);
    const files = {
      'add.sh': ADD_SH,
      'config.txt': 'v1\n',
      'expected.txt': 'v1-built\n',
      'check.sh': 'test "$(cat config.txt)" = "$(cat expected.txt)"\n',
    };
    project = await makeProject({
      guarded: { manifest: { ...CHECK, setup: { commands: ['echo "$(cat config.txt)-built" > config.txt'], timeoutSec: 30 } }, files },
    });
    const fixture = (await discoverFixtures(project)).fixtures[0]!;
    expect(cacheOf((await setUp(local, fixture, cache)).events)).toMatchObject([{ hit: false }]);
    await writeFile(path.join(fixture.dir, 'config.txt'), 'v2\n');
    const second = await setUp(local, fixture, cache);
    expect(cacheOf(second.events)).toMatchObject([{ hit: false }]);
    expect(second.snapshot).toBe((await setUp(local, fixture, null)).snapshot);
  });

  test('local and bwrap share an entry when setup has the network, and only then', async (ctx) => {
    const bwrap = (await backendCases()).find((b) => b.name === 'bwrap');
    if (!bwrap) ctx.skip(); // backendCases fails in CI when bwrap cannot run
    cacheDir = await mkdtemp(path.join(os.tmpdir(), 'rg-cache-'));
    const cache = new SetupCache(cacheDir);
    const online = await blobFixture('online', {});
    const shared = { ...online, manifest: { ...online.manifest, setup: { ...online.manifest.setup!, network: true } } };
    await setUp(local, shared, cache);
    expect(cacheOf((await setUp(await bwrap!.make(), shared, cache)).events)).toMatchObject([{ hit: true }]);
    await setUp(local, online, cache);
    expect(cacheOf((await setUp(await bwrap!.make(), online, cache)).events)).toMatchObject([{ hit: false }]);
    expect((await cache.list()).map((e) => e.meta?.backends.join('+')).sort()).toEqual(['bwrap', 'local', 'local+bwrap']);
  });
});

describe('archives are untrusted', () => {
  test('a setup cache entry naming a path outside the workspace, or writing through its own symlink, is refused', async () => {
    const make = async (add: (p: tar.Pack) => void) => {
      const pack = tar.pack();
      add(pack);
      pack.finalize();
      const chunks: Buffer[] = [];
      for await (const c of pack) chunks.push(c as Buffer);
      return Buffer.concat(chunks);
    };
    const ok = await make((p) => {
      p.entry({ name: './venv/bin/python', type: 'symlink', linkname: '/usr/bin/python3' });
      p.entry({ name: './pkg/version.py', type: 'file' }, 'v');
    });
    await expect(checkArchive(ok, ['stale.txt'])).resolves.toBeUndefined();
    await expect(checkArchive(ok, ['../outside'])).rejects.toMatchObject({ code: 'SANDBOX_PATH_UNSAFE' });
    for (const bad of [
      (p: tar.Pack) => p.entry({ name: '../escape.txt', type: 'file' }, 'x'),
      (p: tar.Pack) => p.entry({ name: '/etc/x', type: 'file' }, 'x'),
      (p: tar.Pack) => (p.entry({ name: 'link', type: 'symlink', linkname: '/etc' }), p.entry({ name: 'link/passwd', type: 'file' }, 'x')),
      (p: tar.Pack) => p.entry({ name: 'hard', type: 'link', linkname: '../../etc/passwd' }),
    ])
      await expect(checkArchive(await make(bad), [])).rejects.toMatchObject({ code: 'SANDBOX_PATH_UNSAFE' });
  });
});
