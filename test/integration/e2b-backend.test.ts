import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { E2BBackend } from '../../harness/sandbox/e2b/backend.js';
import { INLINE_ARCHIVE_BYTES } from '../../harness/sandbox/e2b/sandbox.js';
import { e2bBackendOptions, e2bDouble } from '../helpers/backends-e2b.js';
import { processesWith, uniqueSleep } from '../helpers/procs.js';
import { startE2BDouble } from '../helpers/e2b-server/server.js';

/** What the e2b backend does beyond the conformance suite (test double, real SDK). */
describe('e2b backend specifics', () => {
  test('a big upload goes through /files as one archive; small ones travel inline', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'rg-e2b-big-'));
    const backend = new E2BBackend(e2bBackendOptions());
    const sb = await backend.create({ runId: `big-${process.pid}`, fixtureId: 'big' });
    try {
      const big = Buffer.alloc(INLINE_ARCHIVE_BYTES * 3, 'x');
      await writeFile(path.join(dir, 'big.bin'), big);
      await writeFile(path.join(dir, 'small.txt'), 'small');
      expect(await sb.uploadDir(dir)).toEqual({ files: 2, bytes: big.length + 5 });
      expect((await sb.exec('wc -c < big.bin; cat small.txt; ls -a ..')).stdout).toBe(
        `${big.length}\nsmall.\n..\nbin\nscratch\nworkspace\n`,
      );
      expect(Buffer.compare(await sb.readFile('big.bin'), big)).toBe(0);
      await expect(sb.readFile('missing.txt')).rejects.toMatchObject({ code: 'ENOENT' });
      await sb.writeFiles([{ path: `${sb.scratchDir}/report.xml`, content: '<x/>' }]);
      expect((await sb.readFile(`${sb.scratchDir}/report.xml`)).toString()).toBe('<x/>');
      await sb.removeFiles([`${sb.scratchDir}/report.xml`, 'small.txt']);
      expect((await sb.exec('ls; ls ../scratch')).stdout).toBe('big.bin\n');
    } finally {
      await sb.destroy();
      await rm(dir, { recursive: true, force: true });
    }
  });

  test('a sandbox of a known template costs three requests: create, its first command (with the helper and the upload), kill', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'rg-e2b-three-'));
    const backend = new E2BBackend(e2bBackendOptions());
    try {
      await writeFile(path.join(dir, 'a.txt'), 'A');
      // The first sandbox of the template learns where its home is (one more request).
      const first = await backend.create({ runId: `three-${process.pid}`, fixtureId: 'first' });
      await first.destroy();
      const before = { ...e2bDouble.registry.requests };
      const sb = await backend.create({ runId: `three-${process.pid}`, fixtureId: 'second' });
      expect(await sb.uploadDir(dir)).toEqual({ files: 1, bytes: 1 });
      const r = await sb.exec('cat a.txt; pwd');
      await sb.destroy();
      expect(r).toMatchObject({ exitCode: 0, stdout: `A${sb.workdir}\n`, stderr: '' });
      const made = Object.entries(e2bDouble.registry.requests)
        .map(([route, n]) => [route, n - (before[route] ?? 0)] as const)
        .filter(([, n]) => n > 0);
      expect(Object.fromEntries(made)).toEqual({
        'POST /v2/sandboxes': 1,
        'envd /process.Process/Start': 1,
        'DELETE /sandboxes/:id': 1,
      });
    } finally {
      await backend.close();
      await rm(dir, { recursive: true, force: true });
    }
  });

  test('steps deferred in a fresh sandbox fail at its next call with their own error; too many go ahead on their own', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'rg-e2b-deferred-'));
    const backend = new E2BBackend(e2bBackendOptions());
    try {
      await (await backend.create({ runId: `deferred-${process.pid}`, fixtureId: 'learn' })).destroy();
      await mkdir(path.join(dir, 'real'));
      await writeFile(path.join(dir, 'real', 'a.txt'), 'A');
      await symlink('real', path.join(dir, 'link'));
      const sb = await backend.create({ runId: `deferred-${process.pid}`, fixtureId: 'symlink' });
      await sb.uploadDir(dir);
      // Deferred: refused only once the upload before it is unpacked, as it would have been at once.
      await sb.writeFiles([{ path: 'link/b.txt', content: 'B' }]);
      await expect(sb.exec('true')).rejects.toMatchObject({ code: 'SANDBOX_PATH_UNSAFE', message: expect.stringContaining('symlink') });
      expect((await sb.exec('ls real; readlink link')).stdout).toBe('a.txt\nreal\n');
      await sb.destroy();

      // Two archives of 60 KiB cannot ride in one command line: the first goes ahead on its own.
      const big = [randomBytes(60 * 1024), randomBytes(60 * 1024)];
      const two = await backend.create({ runId: `deferred-${process.pid}`, fixtureId: 'two' });
      await two.writeFiles([{ path: 'one.bin', content: big[0]! }]);
      await two.writeFiles([{ path: 'two.bin', content: big[1]! }]);
      expect(Buffer.compare(await two.readFile('one.bin'), big[0]!)).toBe(0);
      expect(Buffer.compare(await two.readFile('two.bin'), big[1]!)).toBe(0);
      await two.destroy();
    } finally {
      await backend.close();
      await rm(dir, { recursive: true, force: true });
    }
    expect(e2bDouble.alive()).toEqual([]);
  });

  test('a call made while the first one carries the deferred upload waits for the upload, not for that call', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'rg-e2b-second-'));
    const backend = new E2BBackend(e2bBackendOptions());
    const t = uniqueSleep();
    try {
      await writeFile(path.join(dir, 'a.txt'), 'A');
      await (await backend.create({ runId: `second-${process.pid}`, fixtureId: 'learn' })).destroy();
      const sb = await backend.create({ runId: `second-${process.pid}`, fixtureId: 'second' });
      await sb.uploadDir(dir);
      const ac = new AbortController();
      const first = sb.exec(`sleep ${t}`, { signal: ac.signal });
      expect((await sb.exec('cat a.txt')).stdout).toBe('A');
      ac.abort();
      expect(await first).toMatchObject({ aborted: true });
      expect(processesWith(t)).toEqual([]);
      await sb.destroy();
    } finally {
      await backend.close();
      await rm(dir, { recursive: true, force: true });
    }
  });

  test('a template whose home moved during a run: the sandbox made on the old place fails as infra, and the template is not assumed again', async () => {
    const runId = `moved-${process.pid}`;
    const backend = new E2BBackend(e2bBackendOptions({ warm: 1 }));
    try {
      await backend.open(runId);
      await backend.warmed();
      const first = await backend.create({ runId, fixtureId: 'first' });
      expect(first.workdir).toMatch(/\/home\/user\/redgreen\/workspace$/);
      await first.destroy();
      // The pool's next sandbox is made on the root the first one found, then the template moves.
      await backend.warmed();
      e2bDouble.faults = { movedHomes: true };
      const before = await backend.create({ runId, fixtureId: 'before' });
      expect((await before.exec('pwd')).stdout).toBe(`${before.workdir}\n`);
      await before.destroy();
      await backend.warmed();
      const stale = await backend.create({ runId, fixtureId: 'stale' });
      await expect(stale.exec('echo never')).rejects.toMatchObject({
        code: 'SANDBOX_FAILED',
        message: expect.stringContaining('/moved/home/user'),
      });
      await expect(stale.exec('true')).rejects.toMatchObject({ code: 'SANDBOX_FAILED' });
      await stale.destroy();
      // The one the pool made meanwhile on the old root is discarded: later sandboxes have an init.
      for (const id of ['after', 'later']) {
        const sb = await backend.create({ runId, fixtureId: id });
        expect(sb.workdir).toMatch(/\/moved\/home\/user\/redgreen\/workspace$/);
        expect((await sb.exec('pwd')).stdout).toBe(`${sb.workdir}\n`);
        await sb.destroy();
      }
    } finally {
      e2bDouble.faults = {};
      await backend.close();
    }
    expect(e2bDouble.alive()).toEqual([]);
  });

  test('only --pass-env names cross over, and the template keeps its own PATH and HOME', async () => {
    process.env.REDGREEN_E2B_PASSED = 'yes';
    process.env.REDGREEN_E2B_SECRET = 'no';
    const backend = new E2BBackend(e2bBackendOptions({ passEnv: ['REDGREEN_E2B_PASSED'] }));
    const sb = await backend.create({ runId: `env-${process.pid}`, fixtureId: 'env' });
    try {
      const env = (await sb.exec('env')).stdout;
      expect(env).toContain('REDGREEN_E2B_PASSED=yes\n');
      expect(env).not.toContain('REDGREEN_E2B_SECRET');
      expect(env).toContain(`REDGREEN_WORKSPACE=${sb.workdir}\n`);
      expect(env).not.toContain(`HOME=${os.homedir()}\n`);
    } finally {
      delete process.env.REDGREEN_E2B_PASSED;
      delete process.env.REDGREEN_E2B_SECRET;
      await sb.destroy();
    }
  });

  test('CubeSandbox: a legacy envd with only root works once the user is named, and says so when not', async () => {
    const cube = await startE2BDouble({ envdVersion: '0.2.0', users: ['root'] });
    const options = { template: 'tpl-cube', apiKey: 'dummy', apiUrl: cube.apiUrl, sandboxUrl: cube.sandboxUrl, retry: { attempts: 1 } };
    try {
      const named = new E2BBackend({ ...options, user: 'root' });
      const sb = await named.create({ runId: 'cube', fixtureId: 'x' });
      expect((await sb.exec('echo $USER')).stdout).toBe('root\n');
      expect(sb.workdir).toMatch(/\/root\/redgreen\/workspace$/);
      await sb.destroy();
      const unnamed = new E2BBackend(options);
      await expect(unnamed.create({ runId: 'cube', fixtureId: 'y' })).rejects.toMatchObject({
        code: 'SANDBOX_FAILED',
        hint: expect.stringContaining('--e2b-user root'),
      });
      expect(cube.alive()).toEqual([]);
    } finally {
      await cube.close();
    }
  });

  test('no API key is a usage error; an unknown key is refused at open()', async () => {
    const saved = process.env.E2B_API_KEY;
    delete process.env.E2B_API_KEY;
    try {
      expect(() => new E2BBackend({ template: 't' })).toThrow(expect.objectContaining({ code: 'USAGE' }));
    } finally {
      if (saved !== undefined) process.env.E2B_API_KEY = saved;
    }
    const strict = await startE2BDouble({ apiKey: 'right' });
    try {
      const backend = new E2BBackend({ template: 't', apiKey: 'wrong', apiUrl: strict.apiUrl, sandboxUrl: strict.sandboxUrl });
      await expect(backend.open('auth')).rejects.toMatchObject({ code: 'USAGE' });
    } finally {
      await strict.close();
    }
    expect(e2bDouble.alive()).toEqual([]);
  });
});
