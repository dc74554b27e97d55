import { randomBytes } from 'node:crypto';

/** Random bytes drawn 4 KB at a time: a command's token or a sandbox's id then costs no call into the system's random source (tens of µs each on a busy machine). */
const pool = { bytes: Buffer.alloc(0), at: 0 };

/** `n` random bytes (at most 4,096) in hex, never handed out twice. */
export function randomHex(n: number): string {
  if (pool.at + n > pool.bytes.length) {
    pool.bytes = randomBytes(4096);
    pool.at = 0;
  }
  return pool.bytes.toString('hex', pool.at, (pool.at += n));
}
