import { Sandbox, CommandExitError } from 'e2b';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startE2BDouble, type E2BDouble } from '../helpers/e2b-server/server.js';

/** The test double answers the real SDK, unmodified: what the backend's tests rely on. */
describe('e2b test double through the official SDK', () => {
  let double: E2BDouble;
  let conn: { apiKey: string; apiUrl: string; sandboxUrl: string };
  beforeAll(async () => {
    double = await startE2BDouble();
    conn = { apiKey: 'test-key', apiUrl: double.apiUrl, sandboxUrl: double.sandboxUrl };
  });
  afterAll(() => double.close());

  test('create, run, stream output, exit codes, files, list by metadata, kill', async () => {
    const sb = await Sandbox.create('redgreen-test', { ...conn, metadata: { 'redgreen.run': 'a b&c=d', other: 'x' }, timeoutMs: 60_000 });
    try {
      const out: string[] = [];
      const ok = await sb.commands.run('echo hi; echo err >&2', { onStdout: (d) => void out.push(d) });
      expect(ok).toMatchObject({ exitCode: 0, stdout: 'hi\n', stderr: 'err\n' });
      expect(out.join('')).toBe('hi\n');
      const failed = await sb.commands.run('exit 3').catch((e: unknown) => e);
      expect(failed).toBeInstanceOf(CommandExitError);
      expect((failed as CommandExitError).exitCode).toBe(3);

      await sb.files.write('dir/a.bin', new Uint8Array([0, 1, 255]).buffer);
      await sb.files.write([
        { path: 'dir/b.txt', data: 'bee' },
        { path: 'dir/c.txt', data: 'sea' },
      ]);
      await sb.files.write('dir/gz.txt', 'zipped', { gzip: true });
      expect([...(await sb.files.read('dir/a.bin', { format: 'bytes' }))]).toEqual([0, 1, 255]);
      expect(await sb.files.read('dir/gz.txt')).toBe('zipped');
      expect((await sb.files.list('dir')).map((e) => e.name)).toEqual(['a.bin', 'b.txt', 'c.txt', 'gz.txt']);
      expect(await sb.files.exists('dir/nope')).toBe(false);
      await sb.files.rename('dir/b.txt', 'dir/d.txt');
      await sb.files.remove('dir/c.txt');
      expect((await sb.files.list('dir')).map((e) => e.name)).toEqual(['a.bin', 'd.txt', 'gz.txt']);

      const found = await Sandbox.list({ ...conn, query: { metadata: { 'redgreen.run': 'a b&c=d' } } }).nextItems();
      expect(found.map((s) => s.sandboxId)).toEqual([sb.sandboxId]);
      expect(await Sandbox.list({ ...conn, query: { metadata: { 'redgreen.run': 'other' } } }).nextItems()).toEqual([]);
      await sb.setTimeout(120_000);
      expect((await sb.getInfo()).endAt.getTime()).toBeGreaterThan(Date.now() + 100_000);
    } finally {
      expect(await sb.kill()).toBe(true);
    }
    expect(await sb.kill()).toBe(false);
    expect(double.alive()).toEqual([]);
  });

  test('a background command can be killed with SendSignal; a dropped stream leaves it running', async () => {
    const sb = await Sandbox.create('redgreen-test', conn);
    try {
      const h = await sb.commands.run('sleep 30', { background: true, timeoutMs: 0 });
      expect((await sb.commands.list()).map((p) => p.pid)).toContain(h.pid);
      await h.disconnect();
      expect((await sb.commands.list()).map((p) => p.pid)).toContain(h.pid);
      expect(await sb.commands.kill(h.pid)).toBe(true);
      const again = await sb.commands.connect(h.pid).catch(() => null);
      if (again) await expect(again.wait()).rejects.toMatchObject({ exitCode: -1 });
    } finally {
      await sb.kill();
    }
  });

  test('a legacy envd (CubeSandbox) has no default user: the user must be named', async () => {
    const legacy = await startE2BDouble({ envdVersion: '0.2.0', users: ['root'] });
    const c = { apiKey: 'k', apiUrl: legacy.apiUrl, sandboxUrl: legacy.sandboxUrl };
    try {
      const sb = await Sandbox.create('cube-tpl', c);
      await expect(sb.commands.run('whoami')).rejects.toThrow(/user/);
      expect((await sb.commands.run('echo $USER', { user: 'root' })).stdout).toBe('root\n');
      await sb.kill();
    } finally {
      await legacy.close();
    }
  });

  test("refusals and a missing API key come back as the SDK's error classes", async () => {
    double.faults = { refuseCreate: { status: 429, times: 1 } };
    await expect(Sandbox.create('redgreen-test', { ...conn, retries: 0 })).rejects.toMatchObject({ name: 'RateLimitError' });
    double.faults = {};
    await expect(Sandbox.create('redgreen-test', { ...conn, apiKey: '', retries: 0 })).rejects.toThrow(/API key/);
  });
});
