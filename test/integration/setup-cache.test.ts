import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import tar from 'tar-stream';
import { afterEach, describe, expect, test } from 'vitest';
import { diffTrees } from '../../harness/fixtures/scaffold.js';
import { SetupCache } from '../../harness/pipeline/setup-cache.js';
import { unpackTar } from '../../harness/sandbox/core/tar.js';
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
    const cache = new SetupCache(cacheDir);
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

describe('archives are untrusted', () => {
  test('an entry through "..", or a symlink out of the workspace, is refused', async () => {
    const root = await mkdtemp(path.join(os.tmpdir(), 'rg-untar-'));
    try {
      const escapes: ((p: tar.Pack) => void)[] = [
        (p) => p.entry({ name: '../escape.txt', type: 'file' }, 'x'),
        (p) => p.entry({ name: 'link', type: 'symlink', linkname: '/etc' }),
      ];
      for (const add of escapes) {
        const pack = tar.pack();
        add(pack);
        pack.finalize();
        const chunks: Buffer[] = [];
        for await (const c of pack) chunks.push(c as Buffer);
        await expect(unpackTar(root, Buffer.concat(chunks))).rejects.toMatchObject({ code: 'SANDBOX_PATH_UNSAFE' });
      }
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });
});
