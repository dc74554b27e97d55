import { hash } from 'node:crypto';

/**
 * The SHA-256 of `data` (a string as UTF-8) in hex, in one call: crypto.hash makes no Hash object
 * (a stream underneath), which costs more than hashing a fixture's small files and outputs.
 */
export function sha256(data: string | Buffer): string {
  return hash('sha256', data, 'hex');
}
