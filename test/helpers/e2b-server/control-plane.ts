/**
 * TEST DOUBLE of E2B (see README.md): the control-plane REST API the SDK calls — create, list
 * (metadata/state filters, `x-next-token` pagination), get, kill, set timeout, connect — with
 * `X-API-KEY` auth and E2B's `{ code, message }` error bodies.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { readBody } from './connect.js';
import { consumeRefusal, delay, type Faults } from './faults.js';
import type { DoubleSandbox, Registry } from './state.js';

function send(res: ServerResponse, status: number, body?: unknown, headers: Record<string, string> = {}): void {
  if (body === undefined) {
    res.writeHead(status, headers).end();
    return;
  }
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers });
  res.end(text);
}

const error = (res: ServerResponse, code: number, message: string) => send(res, code, { code, message });

function created(sb: DoubleSandbox) {
  return {
    templateID: sb.templateID,
    sandboxID: sb.id,
    clientID: 'test-double',
    envdVersion: sb.envdVersion,
    envdAccessToken: sb.accessToken,
    domain: null,
  };
}

function listed(sb: DoubleSandbox) {
  return {
    templateID: sb.templateID,
    sandboxID: sb.id,
    clientID: 'test-double',
    cpuCount: 2,
    memoryMB: 512,
    diskSizeMB: 1024,
    envdVersion: sb.envdVersion,
    metadata: sb.metadata,
    startedAt: sb.startedAt.toISOString(),
    endAt: sb.endAt.toISOString(),
    state: 'running',
  };
}

/** The SDK sends `metadata=<urlencoded "k=v&k2=v2">` with each key and value URI-encoded once more. */
function metadataFilter(raw: string | null): [string, string][] {
  if (!raw) return [];
  return [...new URLSearchParams(raw)].map(([k, v]) => [decodeURIComponent(k), decodeURIComponent(v)]);
}

export function controlPlaneHandler(registry: Registry, faults: () => Faults, apiKey: string | undefined) {
  return async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const url = new URL(req.url ?? '/', 'http://api');
    const f = faults();
    await delay(f.latencyMs?.api);
    const key = req.headers['x-api-key'];
    if (!key || (apiKey !== undefined && key !== apiKey)) return error(res, 401, 'Invalid API key');
    const body = req.method === 'POST' ? JSON.parse((await readBody(req)).toString('utf8') || '{}') : {};
    const route = `${req.method} ${url.pathname}`;
    registry.count(route.replace(/\/sandboxes\/[^/]+/, '/sandboxes/:id'));

    if (route === 'POST /v2/sandboxes' || route === 'POST /sandboxes') {
      await delay(f.latencyMs?.create);
      const refused = consumeRefusal(f);
      if (refused)
        return error(
          res,
          refused.status,
          refused.status === 429 ? 'Rate limit exceeded (test double)' : 'Service unavailable (test double)',
        );
      if (typeof body.templateID !== 'string' || !body.templateID) return error(res, 400, 'templateID is required');
      return send(res, 201, created(await registry.create(body, f.movedHomes ? 'moved' : '')));
    }
    if (route === 'GET /v2/sandboxes' || route === 'GET /sandboxes') {
      const filter = metadataFilter(url.searchParams.get('metadata'));
      const states = (url.searchParams.get('state') ?? 'running').split(',');
      const all = registry
        .alive()
        .filter((s) => states.includes('running') && filter.every(([k, v]) => s.metadata[k] === v))
        .sort((a, b) => a.startedAt.getTime() - b.startedAt.getTime() || (a.id < b.id ? -1 : 1));
      if (route === 'GET /sandboxes') return send(res, 200, all.map(listed));
      const start = Number(url.searchParams.get('nextToken') ?? 0);
      const limit = Number(url.searchParams.get('limit') ?? 100);
      const page = all.slice(start, start + limit);
      const next: Record<string, string> = start + limit < all.length ? { 'x-next-token': String(start + limit) } : {};
      return send(res, 200, page.map(listed), next);
    }
    const m = /^(?:\/v2)?\/sandboxes\/([^/]+)(?:\/(timeout|connect|refreshes))?$/.exec(url.pathname);
    const sb = m ? registry.get(decodeURIComponent(m[1]!)) : undefined;
    if (!m) return error(res, 404, `no route ${route}`);
    if (!sb) return error(res, 404, `sandbox ${m[1]} not found`);
    switch (`${req.method} ${m[2] ?? ''}`) {
      case 'GET ':
        return send(res, 200, { ...listed(sb), envdAccessToken: sb.accessToken, domain: null });
      case 'DELETE ':
        await registry.kill(sb.id, 'api');
        return send(res, 204);
      case 'POST timeout':
        registry.setTimeout(sb, Number(body.timeout ?? 0));
        return send(res, 204);
      case 'POST refreshes':
        registry.setTimeout(sb, Number(body.duration ?? 300));
        return send(res, 204);
      case 'POST connect':
        if (body.timeout && Date.now() + body.timeout * 1000 > sb.endAt.getTime()) registry.setTimeout(sb, Number(body.timeout));
        return send(res, 200, created(sb));
      default:
        return error(res, 404, `no route ${route}`);
    }
  };
}
