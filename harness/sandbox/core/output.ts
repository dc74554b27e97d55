import { isUtf8 } from 'node:buffer';
import { createHash, type Hash } from 'node:crypto';
import { sha256 } from './sha256.js';
import type { StreamCapture } from './types.js';

/** What an empty stream captures: most of the harness's own commands print nothing. */
const EMPTY: StreamCapture = Object.freeze({
  text: '',
  bytes: 0,
  sha256: 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
  truncated: false,
  utf8: true,
});

/** Bytes kept per stream unless a command asks otherwise. */
export const DEFAULT_MAX_OUTPUT_BYTES = 4 * 1024 * 1024;

/**
 * Keeps at most `cap` bytes of a stream — the first half and the last half, since a runner's
 * summary is at the end — while counting and hashing everything, so memory stays flat whatever
 * a command prints. What fits in the first half is hashed at the end, in one call (most outputs
 * are small, and many are empty); a stream hash starts only once it overflows.
 */
export class CappedOutput {
  private readonly head: Buffer[] = [];
  private headBytes = 0;
  private tail: Buffer[] = [];
  private tailBytes = 0;
  private total = 0;
  /** Every byte so far, once they no longer all fit in `head`. */
  private hash: Hash | null = null;
  private readonly headCap: number;
  private readonly tailCap: number;

  constructor(cap: number) {
    this.headCap = Math.ceil(cap / 2);
    this.tailCap = Math.floor(cap / 2);
  }

  push(chunk: Buffer): void {
    this.total += chunk.length;
    if (!this.hash && this.total > this.headCap) {
      this.hash = createHash('sha256');
      for (const h of this.head) this.hash.update(h);
    }
    this.hash?.update(chunk);
    let rest = chunk;
    if (this.headBytes < this.headCap) {
      const take = Math.min(this.headCap - this.headBytes, rest.length);
      this.head.push(rest.subarray(0, take));
      this.headBytes += take;
      rest = rest.subarray(take);
    }
    if (!rest.length || this.tailCap === 0) return;
    this.tail.push(rest);
    this.tailBytes += rest.length;
    while (this.tailBytes - (this.tail[0]?.length ?? 0) >= this.tailCap) {
      this.tailBytes -= this.tail.shift()!.length;
    }
  }

  finish(): StreamCapture {
    if (this.total === 0) return { ...EMPTY };
    const kept = this.headBytes + Math.min(this.tailBytes, this.tailCap);
    const truncated = this.total > kept;
    const head = Buffer.concat(this.head);
    let tail = Buffer.concat(this.tail);
    if (tail.length > this.tailCap) tail = tail.subarray(tail.length - this.tailCap);
    const raw = truncated ? null : Buffer.concat([head, tail]);
    const text = raw
      ? raw.toString('utf8')
      : `${head.toString('utf8')}\n[… redgreen: ${this.total - head.length - tail.length} bytes omitted …]\n${tail.toString('utf8')}`;
    return {
      text,
      bytes: this.total,
      // Not truncated, `raw` holds every byte; a stream that overflowed its head has its hash.
      sha256: this.hash ? this.hash.digest('hex') : sha256(raw!),
      truncated,
      utf8: isUtf8(raw ?? Buffer.concat([head, tail])),
    };
  }
}
