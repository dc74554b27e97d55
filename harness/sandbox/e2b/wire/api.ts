import { z } from 'zod';
import { E2BServiceError, exchange, type Answer } from './http.js';
import { USER_AGENT, type E2BConnection } from './connection.js';

/**
 * E2B's control-plane REST API, the calls redgreen makes: create a sandbox, list them by
 * metadata, renew one's timeout, kill one. Bodies and queries are the ones the official SDK
 * sends (test/helpers/e2b-server is checked against that SDK).
 */

/** What a creation answers: enough to reach the sandbox's envd. */
export interface SandboxAccess {
  sandboxId: string;
  envdVersion: string;
  envdAccessToken?: string;
  /** The sandbox's own domain, when the service names one (else the connection's). */
  domain?: string;
}

const Created = z.object({
  sandboxID: z.string().min(1),
  envdVersion: z.string().min(1),
  envdAccessToken: z.string().nullish(),
  domain: z.string().nullish(),
});

const Listed = z.array(
  z.object({
    sandboxID: z.string().min(1),
    metadata: z.record(z.string(), z.string()).nullish(),
    endAt: z.string().nullish(),
  }),
);

export interface ListedSandbox {
  sandboxId: string;
  metadata: Record<string, string>;
  endAt: Date | null;
}

function request(c: E2BConnection, method: 'GET' | 'POST' | 'DELETE', path: string, body?: unknown) {
  return {
    method,
    url: `${c.apiUrl}${path}`,
    headers: {
      'x-api-key': c.apiKey,
      'user-agent': USER_AGENT(),
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    timeoutMs: c.requestTimeoutMs,
  };
}

function json<T>(what: string, a: Answer, schema: z.ZodType<T>): T {
  let value: unknown;
  try {
    value = JSON.parse(a.body.toString('utf8'));
  } catch {
    throw new E2BServiceError(a.status, `${what}: the service answered with something that is not JSON`);
  }
  const r = schema.safeParse(value);
  if (!r.success) throw new E2BServiceError(a.status, `${what}: unexpected answer: ${r.error.issues[0]?.message ?? ''}`);
  return r.data;
}

const seconds = (ms: number) => Math.ceil(ms / 1000);

/** POST /v2/sandboxes: a sandbox from `template`, labelled with `metadata`, that dies after `lifetimeMs` unless renewed. */
export async function createSandbox(
  c: E2BConnection,
  template: string,
  o: { metadata: Record<string, string>; lifetimeMs: number },
): Promise<SandboxAccess> {
  const what = `creating a sandbox from template "${template}"`;
  const a = await exchange(
    what,
    request(c, 'POST', '/v2/sandboxes', { templateID: template, metadata: o.metadata, timeout: seconds(o.lifetimeMs) }),
  );
  const r = json(what, a, Created);
  return {
    sandboxId: r.sandboxID,
    envdVersion: r.envdVersion,
    ...(r.envdAccessToken ? { envdAccessToken: r.envdAccessToken } : {}),
    ...(r.domain ? { domain: r.domain } : {}),
  };
}

/** DELETE /sandboxes/{id}: false when it was already gone (404). */
export async function killSandbox(c: E2BConnection, sandboxId: string): Promise<boolean> {
  if (c.debug) return true; // a local debug envd has no control plane to ask
  try {
    await exchange(`killing sandbox ${sandboxId}`, request(c, 'DELETE', `/sandboxes/${encodeURIComponent(sandboxId)}`));
    return true;
  } catch (e) {
    if (e instanceof E2BServiceError && e.status === 404) return false;
    throw e;
  }
}

/** POST /sandboxes/{id}/timeout: the sandbox now dies `lifetimeMs` from now. A sandbox that is gone throws (404). */
export async function setSandboxTimeout(c: E2BConnection, sandboxId: string, lifetimeMs: number): Promise<void> {
  await exchange(
    `renewing the timeout of sandbox ${sandboxId}`,
    request(c, 'POST', `/sandboxes/${encodeURIComponent(sandboxId)}/timeout`, { timeout: seconds(lifetimeMs) }),
  );
}

/**
 * GET /v2/sandboxes, one page: running and paused sandboxes whose metadata include `metadata`
 * (the SDK's encoding: `k=v` pairs, each part URI-encoded, joined as a query string), and the
 * token of the next page (x-next-token) if there is one.
 */
export async function listSandboxes(
  c: E2BConnection,
  metadata: Record<string, string>,
  o: { limit: number; nextToken?: string },
): Promise<{ sandboxes: ListedSandbox[]; nextToken?: string }> {
  const pairs = new URLSearchParams(
    Object.entries(metadata).map(([k, v]): [string, string] => [encodeURIComponent(k), encodeURIComponent(v)]),
  );
  // As openapi-fetch serialises the SDK's query: each value URI-encoded, the state list joined by a bare comma.
  const query = [
    ...(pairs.size ? [`metadata=${encodeURIComponent(pairs.toString())}`] : []),
    'state=running,paused',
    `limit=${o.limit}`,
    ...(o.nextToken ? [`nextToken=${encodeURIComponent(o.nextToken)}`] : []),
  ].join('&');
  const what = 'listing sandboxes';
  const a = await exchange(what, request(c, 'GET', `/v2/sandboxes?${query}`));
  const next = a.headers['x-next-token'];
  return {
    sandboxes: json(what, a, Listed).map((s) => ({
      sandboxId: s.sandboxID,
      metadata: s.metadata ?? {},
      endAt: s.endAt ? new Date(s.endAt) : null,
    })),
    ...(typeof next === 'string' && next ? { nextToken: next } : {}),
  };
}
