/**
 * The Connect protocol's streaming framing, JSON codec (what envd speaks with the SDK's
 * transport): each message is a 5-byte envelope (flags, big-endian length) and its JSON; the
 * last one carries flag 0x02 and, on failure, `{ error: { code, message } }`.
 */
export const END_STREAM = 0x02;

export function envelope(message: unknown): Buffer {
  const json = Buffer.from(JSON.stringify(message));
  const out = Buffer.allocUnsafe(5 + json.length);
  out[0] = 0;
  out.writeUInt32BE(json.length, 1);
  json.copy(out, 5);
  return out;
}

/** Cuts a byte stream into envelopes, whatever the chunking. */
export class EnvelopeReader {
  private pending: Buffer | null = null;

  /** The whole envelopes completed by `chunk`, in order. */
  *feed(chunk: Buffer): Generator<{ flags: number; message: unknown }> {
    let buf = this.pending ? Buffer.concat([this.pending, chunk]) : chunk;
    while (buf.length >= 5) {
      const len = buf.readUInt32BE(1);
      if (buf.length < 5 + len) break;
      const flags = buf[0]!;
      const text = buf.toString('utf8', 5, 5 + len);
      buf = buf.subarray(5 + len);
      yield { flags, message: text ? JSON.parse(text) : {} };
    }
    this.pending = buf.length ? buf : null;
  }

  /** Bytes of an envelope not yet complete. */
  get buffered(): number {
    return this.pending?.length ?? 0;
  }
}

/** Connect's error codes as HTTP statuses (the protocol's own table), so one rule reads both kinds of failure. */
const STATUS: Record<string, number> = {
  canceled: 499,
  unknown: 500,
  invalid_argument: 400,
  deadline_exceeded: 504,
  not_found: 404,
  already_exists: 409,
  permission_denied: 403,
  resource_exhausted: 429,
  failed_precondition: 400,
  aborted: 409,
  out_of_range: 400,
  unimplemented: 501,
  internal: 500,
  unavailable: 503,
  data_loss: 500,
  unauthenticated: 401,
};

export const connectStatus = (code: unknown): number => STATUS[String(code)] ?? 500;
