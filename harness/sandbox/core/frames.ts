import { randomHex } from './random.js';

/**
 * One byte stream that carries the output of many commands, run one after another by a long-lived
 * helper in the sandbox (Docker's command server): after each command, once it and everything it
 * started are gone, the helper writes a frame `<token> <fields…>\n`. The token is new for every
 * command and never given to it, so its first occurrence ends the command's output: the bytes
 * before it are exactly the command's (byte counts and hashes stay exact), wherever chunk
 * boundaries fall. Any byte outside a command, or a frame that is not one line, breaks the
 * protocol: the stream is then unusable (`failed`), and whoever owns the helper retires it.
 */
const MAX_FRAME_BYTES = 256;

export class FramedStream {
  private token: Buffer | null = null;
  private onData: ((chunk: Buffer) => void) | null = null;
  private settle: ((fields: string[]) => void) | null = null;
  private reject: ((e: Error) => void) | null = null;
  /** Bytes that may be the start of the token, held back until the next chunk says. */
  private carry: Buffer = Buffer.alloc(0);
  /** The frame seen so far (token included), until its newline. */
  private frame: Buffer | null = null;
  /** Set once the protocol broke or the stream ended: every later use fails with it. */
  failed: Error | null = null;

  constructor(private readonly name: string) {}

  /** Starts reading one command's output: `onData` gets its bytes; resolves with the frame's fields after the token. */
  expect(token: string, onData: (chunk: Buffer) => void): Promise<string[]> {
    if (this.failed) return Promise.reject(this.failed);
    if (this.token) return Promise.reject(new Error(`${this.name}: a command is already being read`));
    this.token = Buffer.from(token);
    this.onData = onData;
    return new Promise<string[]>((resolve, reject) => {
      this.settle = resolve;
      this.reject = reject;
    });
  }

  push(chunk: Buffer): void {
    if (this.failed || !chunk.length) return;
    if (!this.token) return this.fail(new Error(`${this.name}: ${chunk.length} byte(s) arrived outside any command`));
    if (this.frame) return this.frameBytes(chunk);
    const buf = this.carry.length ? Buffer.concat([this.carry, chunk]) : chunk;
    const at = buf.indexOf(this.token);
    if (at >= 0) {
      this.carry = Buffer.alloc(0);
      if (at > 0) this.onData!(buf.subarray(0, at));
      this.frame = Buffer.alloc(0);
      return this.frameBytes(buf.subarray(at + this.token.length));
    }
    // Keep back only an end that could still be the token's start: the rest goes on at once (live output).
    const keep = tokenStartAtEnd(buf, this.token);
    const out = buf.subarray(0, buf.length - keep);
    this.carry = Buffer.from(buf.subarray(buf.length - keep));
    if (out.length) this.onData!(out);
  }

  private frameBytes(chunk: Buffer): void {
    const frame = Buffer.concat([this.frame!, chunk]);
    const nl = frame.indexOf(0x0a);
    if (nl < 0) {
      if (frame.length > MAX_FRAME_BYTES) return this.fail(new Error(`${this.name}: a frame without its end`));
      this.frame = frame;
      return;
    }
    const rest = frame.subarray(nl + 1);
    const fields = frame.subarray(0, nl).toString('latin1').trim().split(' ');
    const settle = this.settle!;
    this.token = this.onData = this.settle = this.reject = this.frame = null;
    settle(fields);
    // Nothing is written after a frame until the next command starts.
    if (rest.length) this.fail(new Error(`${this.name}: ${rest.length} byte(s) arrived after a command's frame`));
  }

  /** The stream ended or broke (the helper died, the connection closed): a command being read fails with `e`. */
  fail(e: Error): void {
    if (this.failed) return;
    this.failed = e;
    const reject = this.reject;
    this.token = this.onData = this.settle = this.reject = this.frame = null;
    reject?.(e);
  }
}

/** A new command's token: 16 random bytes in hex, never handed out twice. */
export function newToken(): string {
  return randomHex(16);
}

/** The length of the longest end of `buf` that is a start of `token` (shorter than the token). */
function tokenStartAtEnd(buf: Buffer, token: Buffer): number {
  for (let k = Math.min(buf.length, token.length - 1); k > 0; k--) {
    if (buf[buf.length - k] === token[0] && buf.subarray(buf.length - k).equals(token.subarray(0, k))) return k;
  }
  return 0;
}
