/**
 * TEST DOUBLE of E2B (see README.md): the Connect protocol as envd speaks it with the SDK's
 * connect-web transport in JSON mode. Unary calls are plain JSON; server-streaming calls send
 * 5-byte envelopes (flags, big-endian length) and end with an end-stream envelope (flags 0x02).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';

export const END_STREAM_FLAG = 0x02;

export type ConnectCode =
  | 'canceled'
  | 'unknown'
  | 'invalid_argument'
  | 'deadline_exceeded'
  | 'not_found'
  | 'already_exists'
  | 'permission_denied'
  | 'resource_exhausted'
  | 'failed_precondition'
  | 'internal'
  | 'unavailable'
  | 'unauthenticated';

const HTTP_STATUS: Record<ConnectCode, number> = {
  canceled: 499,
  unknown: 500,
  invalid_argument: 400,
  deadline_exceeded: 504,
  not_found: 404,
  already_exists: 409,
  permission_denied: 403,
  resource_exhausted: 429,
  failed_precondition: 400,
  internal: 500,
  unavailable: 503,
  unauthenticated: 401,
};

export class ConnectFailure extends Error {
  constructor(
    readonly code: ConnectCode,
    message: string,
  ) {
    super(message);
  }
}

export async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

export function envelope(flags: number, message: unknown): Buffer {
  const json = Buffer.from(JSON.stringify(message));
  const head = Buffer.alloc(5);
  head.writeUInt8(flags, 0);
  head.writeUInt32BE(json.length, 1);
  return Buffer.concat([head, json]);
}

/** The one request message of a server-streaming call (the fetch transport sends exactly one). */
export function parseEnvelopedRequest(body: Buffer): Record<string, unknown> {
  if (body.length < 5) throw new ConnectFailure('invalid_argument', 'missing request envelope');
  const len = body.readUInt32BE(1);
  if (body.length < 5 + len) throw new ConnectFailure('invalid_argument', 'truncated request envelope');
  return JSON.parse(body.subarray(5, 5 + len).toString('utf8')) as Record<string, unknown>;
}

export function sendUnary(res: ServerResponse, message: unknown): void {
  const body = JSON.stringify(message);
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

export function sendUnaryError(res: ServerResponse, code: ConnectCode, message: string): void {
  const body = JSON.stringify({ code, message });
  res.writeHead(HTTP_STATUS[code], { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

/** A server stream: `send` writes one message; `end` writes the end-stream envelope (with an error, if any). */
export class ServerStream {
  private ended = false;

  constructor(private readonly res: ServerResponse) {
    res.writeHead(200, { 'content-type': 'application/connect+json' });
    // Frames go out as soon as they are written, not when a buffer fills.
    res.socket?.setNoDelay(true);
  }

  get open(): boolean {
    return !this.ended && !this.res.destroyed;
  }

  send(message: unknown): void {
    if (this.open) this.res.write(envelope(0, message));
  }

  end(error?: { code: ConnectCode; message: string }): void {
    if (!this.open) return;
    this.ended = true;
    this.res.end(envelope(END_STREAM_FLAG, error ? { error } : {}));
  }

  /** Drops the connection without an end-stream envelope: what a network cut looks like. */
  cut(): void {
    this.ended = true;
    this.res.socket?.destroy();
  }
}
