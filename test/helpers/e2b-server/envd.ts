/**
 * TEST DOUBLE of E2B (see README.md): the sandbox proxy in front of each sandbox's envd. Requests
 * are routed by the `E2b-Sandbox-Id` header (as `sandbox.e2b.app` does), authorised with the
 * sandbox's `X-Access-Token`, and run as the user named by HTTP Basic auth (or `?username=`);
 * an envd older than 0.4 has no default user, so a client must name one (CubeSandbox's case).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import path from 'node:path';
import { ConnectFailure, sendUnaryError, ServerStream } from './connect.js';
import { filesRest, filesystemService } from './envd-files.js';
import { processService, type EnvdContext } from './envd-process.js';
import { delay, type Faults } from './faults.js';
import type { DoubleSandbox, Registry } from './state.js';

const STREAMING = new Set(['/process.Process/Start', '/process.Process/Connect']);

function versionAtLeast(v: string, min: string): boolean {
  const a = v.split('.').map(Number);
  const b = min.split('.').map(Number);
  for (let i = 0; i < 3; i++) if ((a[i] ?? 0) !== (b[i] ?? 0)) return (a[i] ?? 0) > (b[i] ?? 0);
  return true;
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

function userOf(sb: DoubleSandbox, req: IncomingMessage, query: URLSearchParams): string {
  const auth = /^Basic (.+)$/.exec(String(req.headers.authorization ?? ''));
  const named = auth ? Buffer.from(auth[1]!, 'base64').toString('utf8').split(':')[0] : (query.get('username') ?? undefined);
  const user = named || (versionAtLeast(sb.envdVersion, '0.4.0') ? 'user' : undefined);
  if (!user) throw new ConnectFailure('unauthenticated', 'unauthenticated, no user specified');
  if (!sb.homes.has(user)) throw new ConnectFailure('unauthenticated', `user '${user}' does not exist in this sandbox`);
  return user;
}

function context(sb: DoubleSandbox, user: string, registry: Registry, faults: Faults): EnvdContext {
  const home = sb.homes.get(user)!;
  return {
    sb,
    user,
    home,
    registry,
    faults,
    resolve(p: string) {
      const abs = path.resolve(home, p);
      // The double refuses to touch the host outside the sandbox's folder (a real envd would reach the whole VM).
      if (abs !== sb.dir && !abs.startsWith(sb.dir + path.sep))
        throw new ConnectFailure('permission_denied', `test double: ${p} is outside the sandbox folder`);
      return abs;
    },
  };
}

export function envdHandler(registry: Registry, faults: () => Faults) {
  return async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const url = new URL(req.url ?? '/', 'http://envd');
    const f = faults();
    await delay(f.latencyMs?.envd);
    const sb = registry.get(String(req.headers['e2b-sandbox-id'] ?? ''));
    // What E2B's proxy answers for a sandbox that is gone; the SDK reads 502 as "not running".
    if (!sb)
      return sendJson(res, 502, { code: 502, message: 'The sandbox was not found', sandboxId: req.headers['e2b-sandbox-id'] ?? null });
    if (req.headers['x-access-token'] !== sb.accessToken) return sendJson(res, 401, { code: 401, message: 'invalid access token' });
    registry.count(`envd ${url.pathname === '/files' ? `${req.method} /files` : url.pathname}`);
    try {
      if (url.pathname === '/health') {
        res.writeHead(204).end();
        return;
      }
      const ctx = context(sb, userOf(sb, req, url.searchParams), registry, f);
      if (url.pathname === '/files') return await filesRest(req, res, ctx, url.searchParams);
      const m = /^\/(process\.Process|filesystem\.Filesystem)\/(\w+)$/.exec(url.pathname);
      if (!m) return sendJson(res, 404, { code: 404, message: `no route ${url.pathname}` });
      if (m[1] === 'process.Process') return await processService(m[2]!, req, res, ctx);
      return await filesystemService(m[2]!, req, res, ctx);
    } catch (e) {
      const code = e instanceof ConnectFailure ? e.code : 'internal';
      const message = e instanceof Error ? e.message : String(e);
      if (res.headersSent) return void res.end();
      if (url.pathname === '/files')
        return sendJson(res, code === 'unauthenticated' ? 401 : code === 'permission_denied' ? 403 : 500, { code: 500, message });
      // A streaming call reports its error in the end-stream envelope, with HTTP 200.
      if (STREAMING.has(url.pathname)) return new ServerStream(res).end({ code, message });
      return sendUnaryError(res, code, message);
    }
  };
}
