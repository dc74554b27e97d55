import http, { type IncomingMessage } from 'node:http';
import https from 'node:https';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';

/**
 * HTTP/1.1 for the E2B wire client, on node:http with keep-alive agents: one connection pool per
 * scheme for the whole process, as the SDK's undici dispatcher is. Measured against the SDK's
 * fetch + web streams, a create → command → kill costs the harness a third of the CPU.
 */
const AGENT_OPTIONS = { keepAlive: true, maxSockets: 256, scheduling: 'lifo' as const };
const agents = { 'http:': new http.Agent(AGENT_OPTIONS), 'https:': new https.Agent(AGENT_OPTIONS) };

/** The service answered with an error: an HTTP status, or a Connect error mapped onto one. */
export class E2BServiceError extends Error {
  override readonly name = 'E2BServiceError';
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** No answer within the request's time. */
export class E2BRequestTimeout extends Error {
  override readonly name = 'TimeoutError';
}

export interface WireRequest {
  method: 'GET' | 'POST' | 'DELETE';
  url: string;
  headers: Record<string, string>;
  body?: Buffer | string | Readable;
  /** From the request until `settled` is called (the whole exchange unless the caller settles earlier); 0: none. */
  timeoutMs: number;
  signal?: AbortSignal;
}

export interface OpenResponse {
  res: IncomingMessage;
  /** Stops the request's timer: the caller has what it waited for (headers, a first message). */
  settled(): void;
}

/** Sends a request; resolves with the response once its headers are in. The caller reads (or drops) the body. */
export function open(r: WireRequest): Promise<OpenResponse> {
  return new Promise((resolve, reject) => {
    const u = new URL(r.url);
    const client = u.protocol === 'https:' ? https : http;
    const agent = agents[u.protocol as keyof typeof agents];
    if (!agent) return reject(new Error(`e2b: unsupported URL ${r.url}`));
    const body = typeof r.body === 'string' ? Buffer.from(r.body) : r.body;
    const headers = Buffer.isBuffer(body) ? { ...r.headers, 'content-length': String(body.length) } : r.headers;
    const req = client.request(u, { method: r.method, headers, agent, signal: r.signal });
    let timer: NodeJS.Timeout | undefined;
    let response: IncomingMessage | undefined;
    const settled = () => clearTimeout(timer);
    if (r.timeoutMs > 0) {
      timer = setTimeout(() => {
        const e = new E2BRequestTimeout(`e2b: no answer to ${r.method} ${u.pathname} within ${r.timeoutMs} ms`);
        // Once the headers are in, the body's reader hears of it as this error.
        (response ?? req).destroy(e);
        reject(e);
      }, r.timeoutMs);
    }
    // `on`, not `once`: an error after the response (a cut mid-body) must not go unhandled.
    req.on('error', (e) => {
      settled();
      reject(e);
    });
    req.once('response', (res) => {
      response = res;
      resolve({ res, settled });
    });
    if (body === undefined || Buffer.isBuffer(body)) req.end(body);
    else pipeline(body, req).catch((e: unknown) => req.destroy(e as Error));
  });
}

export async function readAll(res: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of res) chunks.push(c as Buffer);
  return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
}

/** The error a non-2xx answer stands for: E2B's `{ code, message }` body, a Connect error's, or the status line. */
export function serviceError(what: string, status: number, body: Buffer, statusText = ''): E2BServiceError {
  let message = body.toString('utf8').trim().slice(0, 500);
  try {
    const parsed = JSON.parse(message) as { message?: unknown };
    if (typeof parsed.message === 'string' && parsed.message) message = parsed.message;
  } catch {
    // Not JSON: the text itself (a proxy's HTML page is cut short above).
  }
  return new E2BServiceError(status, `${what}: HTTP ${status}${statusText ? ` ${statusText}` : ''}: ${message || '(no message)'}`);
}

export interface Answer {
  status: number;
  headers: IncomingMessage['headers'];
  body: Buffer;
}

/** A whole exchange: the answer's body read to its end within the time; a non-2xx answer throws E2BServiceError. */
export async function exchange(what: string, r: WireRequest): Promise<Answer> {
  const { res, settled } = await open(r);
  try {
    const body = await readAll(res);
    const status = res.statusCode ?? 0;
    if (status < 200 || status > 299) throw serviceError(what, status, body, res.statusMessage);
    return { status, headers: res.headers, body };
  } finally {
    settled();
  }
}
