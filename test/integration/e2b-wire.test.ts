import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Sandbox } from 'e2b';
import { afterEach, describe, expect, test } from 'vitest';
import { createSandbox, killSandbox, listSandboxes, setSandboxTimeout } from '../../harness/sandbox/e2b/wire/api.js';
import { resolveConnection } from '../../harness/sandbox/e2b/wire/connection.js';
import { Envd } from '../../harness/sandbox/e2b/wire/envd.js';
import { readAll } from '../../harness/sandbox/e2b/wire/http.js';
import { recordingProxy, type Recorded, type Recorder } from '../helpers/e2b-server/recorder.js';
import { startE2BDouble, type E2BDouble, type E2BDoubleOptions } from '../helpers/e2b-server/server.js';

/**
 * The backend's wire client (harness/sandbox/e2b/wire/) stands in for the official SDK on the hot
 * path. Here both make the same calls through a recording proxy in front of the test double, and
 * the requests must match field by field — what decides whether a real E2B (or CubeSandbox)
 * understands it the same way.
 */
const open: (E2BDouble | Recorder)[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((x) => x.close()));
});

async function recorded(options: E2BDoubleOptions = {}) {
  const double = await startE2BDouble(options);
  const api = await recordingProxy(double.apiUrl);
  const envd = await recordingProxy(double.sandboxUrl);
  open.push(api, envd, double);
  return { double, conn: { apiKey: 'parity-key', apiUrl: api.url, sandboxUrl: envd.url }, api: api.requests, envd: envd.requests };
}

const COMPARED_HEADERS = [
  'authorization',
  'content-type',
  'content-encoding',
  'connect-protocol-version',
  'connect-timeout-ms',
  'keepalive-ping-interval',
  'e2b-sandbox-port',
  'x-api-key',
];

/** One request with what may differ between clients taken out: ids, a multipart boundary, client-identifying headers. */
function normalise(r: Recorded, sandboxId: string) {
  const url = new URL(r.url.split(sandboxId).join('ID'), 'http://x');
  const headers = Object.fromEntries(COMPARED_HEADERS.filter((h) => r.headers[h] !== undefined).map((h) => [h, String(r.headers[h])]));
  const type = String(r.headers['content-type'] ?? '');
  let body: unknown = r.body.toString('utf8');
  if (type === 'application/json') body = JSON.parse(r.body.toString('utf8'));
  if (type === 'application/connect+json') body = { flags: r.body[0], message: JSON.parse(r.body.subarray(5).toString('utf8')) };
  if (type.startsWith('multipart/form-data')) {
    const boundary = type.split('boundary=')[1]!;
    body = r.body.toString('utf8').split(boundary).join('<boundary>');
    headers['content-type'] = 'multipart/form-data; boundary=<boundary>';
  }
  return {
    method: r.method,
    path: url.pathname,
    query: [...url.searchParams].sort(),
    headers,
    sandboxHeaders: {
      id: r.headers['e2b-sandbox-id'] === sandboxId || r.headers['e2b-sandbox-id'] === undefined,
      token: 'x-access-token' in r.headers,
    },
    body,
  };
}

const METADATA = { redgreen: '1', 'redgreen.run': 'a b&c=d/é' };
const USER = 'user';

/** The calls the backend makes, through the SDK. */
async function throughSdk(conn: { apiKey: string; apiUrl: string; sandboxUrl: string }, user: string | undefined): Promise<string> {
  const sb = await Sandbox.create('parity', { ...conn, metadata: METADATA, timeoutMs: 300_000, retries: 0 });
  const u = user ? { user } : {};
  await sb.commands.run('echo helper', { ...u, timeoutMs: 60_000 });
  const h = await sb.commands.run('echo exec', { ...u, envs: { X: '1' }, background: true, timeoutMs: 0 });
  await h.wait();
  await sb.files.write('redgreen/bin/rg', 'script', { ...u, useOctetStream: true });
  const stream = await sb.files.read('redgreen/bin/rg', { ...u, format: 'stream' });
  for await (const _ of stream as AsyncIterable<Uint8Array>) void _;
  await sb.setTimeout(300_000);
  await Sandbox.list({ ...conn, query: { metadata: METADATA, state: ['running', 'paused'] }, limit: 100 }).nextItems();
  await sb.kill();
  return sb.sandboxId;
}

/** The same calls through the wire client. */
async function throughWire(conn: { apiKey: string; apiUrl: string; sandboxUrl: string }, user: string | undefined): Promise<string> {
  const c = resolveConnection(conn)!;
  const access = await createSandbox(c, 'parity', { metadata: METADATA, lifetimeMs: 300_000 });
  const envd = new Envd(c, access);
  const o = { ...(user ? { user } : {}), requestTimeoutMs: 30_000 };
  expect(await envd.run('echo helper', { ...o, timeoutMs: 60_000 })).toEqual({ exitCode: 0, stdout: 'helper\n', stderr: '' });
  const p = await envd.start('echo exec', { ...o, envs: { X: '1' }, timeoutMs: 0 });
  expect(await p.ended).toEqual({ exitCode: 0 });
  await envd.writeFile('redgreen/bin/rg', Buffer.from('script'), o);
  expect((await readAll(await envd.readFile('redgreen/bin/rg', o))).toString()).toBe('script');
  await setSandboxTimeout(c, access.sandboxId, 300_000);
  const listed = await listSandboxes(c, METADATA, { limit: 100 });
  expect(listed.sandboxes.map((s) => s.sandboxId)).toEqual([access.sandboxId]);
  expect(await killSandbox(c, access.sandboxId)).toBe(true);
  expect(await killSandbox(c, access.sandboxId)).toBe(false);
  return access.sandboxId;
}

describe('the e2b wire client sends what the official SDK sends', () => {
  test.each([
    ['envd 0.5.7, the default user', { envdVersion: '0.5.7' }, undefined],
    ['envd 0.5.7, a named user', { envdVersion: '0.5.7' }, USER],
    ['envd 0.2.0 (CubeSandbox): no default user, multipart uploads', { envdVersion: '0.2.0' }, undefined],
    ['envd 0.2.0 (CubeSandbox), a named user', { envdVersion: '0.2.0', users: ['root'] }, 'root'],
  ] as const)('%s', async (_name, options, user) => {
    const sdk = await recorded(options);
    const sdkId = await throughSdk(sdk.conn, user);
    const wire = await recorded(options);
    const wireId = await throughWire(wire.conn, user);
    const norm = (rs: Recorded[], id: string) => rs.map((r) => normalise(r, id));
    // The wire client's second kill (a 404) has no SDK counterpart.
    const api = norm(wire.api, wireId);
    expect(api.pop()).toMatchObject({ method: 'DELETE', path: '/sandboxes/ID' });
    expect(api).toEqual(norm(sdk.api, sdkId));
    expect(norm(wire.envd, wireId)).toEqual(norm(sdk.envd, sdkId));
    expect([api.length, wire.envd.length]).toEqual([4, 4]);
  });
});

describe('the wire client on a broken envd stream', () => {
  /** An envd that answers Start with these bytes (then closes), as a broken proxy or server could. */
  async function envdAnswering(status: number, bytes: Buffer, type = 'application/connect+json') {
    const server = http.createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        res.writeHead(status, { 'content-type': type });
        res.end(bytes);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    open.push({ close: () => new Promise<void>((resolve) => server.close(() => resolve())) } as Recorder);
    const c = resolveConnection({
      apiKey: 'k',
      apiUrl: 'http://127.0.0.1:9',
      sandboxUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    })!;
    return new Envd(c, { sandboxId: 'sb1', envdVersion: '0.5.7' });
  }
  const env = (flags: number, message: unknown) => {
    const json = Buffer.from(JSON.stringify(message));
    const head = Buffer.alloc(5);
    head[0] = flags;
    head.writeUInt32BE(json.length, 1);
    return Buffer.concat([head, json]);
  };
  const opts = { timeoutMs: 0, requestTimeoutMs: 5000 };

  test('an end-stream error before the start is the start failure, with the Connect code read as its HTTP status', async () => {
    const envd = await envdAnswering(200, env(2, { error: { code: 'resource_exhausted', message: 'too many processes' } }));
    await expect(envd.start('true', opts)).rejects.toMatchObject({
      name: 'E2BServiceError',
      status: 429,
      message: expect.stringMatching(/resource_exhausted: too many processes/),
    });
  });

  test('a stream that ends without the process end, or before the start, is a broken stream, not an exit code', async () => {
    const started = await envdAnswering(
      200,
      Buffer.concat([env(0, { event: { start: { pid: 7 } } }), env(0, { event: { data: { stdout: 'aGk=' } } })]),
    );
    const out: string[] = [];
    const p = await started.start('true', { ...opts, onStdout: (b) => out.push(b.toString()) });
    expect(p.pid).toBe(7);
    await expect(p.ended).rejects.toThrow(/the stream ended without the process's end/);
    expect(out).toEqual(['hi']);
    const empty = await envdAnswering(200, Buffer.alloc(0));
    await expect(empty.start('true', opts)).rejects.toThrow(/the stream ended before the process started/);
  });

  test('headers, then nothing within the request time: the start fails as a timeout, named as one', async () => {
    const server = http.createServer((req, res) => {
      req.resume();
      res.writeHead(200, { 'content-type': 'application/connect+json' });
      res.flushHeaders();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    open.push({
      close: () =>
        new Promise<void>((resolve) => {
          server.closeAllConnections();
          server.close(() => resolve());
        }),
    } as Recorder);
    const c = resolveConnection({ apiKey: 'k', sandboxUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}` })!;
    const envd = new Envd(c, { sandboxId: 'sb1', envdVersion: '0.5.7' });
    await expect(envd.start('true', { timeoutMs: 0, requestTimeoutMs: 300 })).rejects.toMatchObject({
      name: 'TimeoutError',
      message: expect.stringMatching(/no answer to POST \/process\.Process\/Start within 300 ms/),
    });
  });

  test('a message that is not JSON, and a proxy error page, say what came', async () => {
    const garbage = await envdAnswering(200, Buffer.concat([Buffer.from([0, 0, 0, 0, 3]), Buffer.from('{x}')]));
    await expect(garbage.start('true', opts)).rejects.toThrow(/envd sent a message that is not JSON/);
    const page = await envdAnswering(502, Buffer.from('<html>Bad Gateway</html>'), 'text/html');
    await expect(page.start('true', opts)).rejects.toMatchObject({ status: 502, message: expect.stringMatching(/HTTP 502.*Bad Gateway/) });
  });

  test("an exit code of 0 is left out of envd's end event (protobuf JSON) and reads as 0; a signal is -1", async () => {
    const zero = await envdAnswering(
      200,
      Buffer.concat([env(0, { event: { start: { pid: 1 } } }), env(0, { event: { end: { exited: true } } }), env(2, {})]),
    );
    expect(await (await zero.start('true', opts)).ended).toEqual({ exitCode: 0 });
    const killed = await envdAnswering(
      200,
      Buffer.concat([
        env(0, { event: { start: { pid: 1 } } }),
        env(0, { event: { end: { exitCode: -1, status: 'signal: killed' } } }),
        env(2, {}),
      ]),
    );
    expect(await (await killed.start('true', opts)).ended).toEqual({ exitCode: -1 });
  });
});
