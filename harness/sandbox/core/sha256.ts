import { createRequire } from 'node:module';

/** node:crypto's one-shot hash, loaded at the first use: `validate` hashes nothing, and crypto is 15 modules to load. */
let hash: typeof import('node:crypto').hash | undefined;

/**
 * The SHA-256 of `data` (a string as UTF-8) in hex, in one call: crypto.hash makes no Hash object
 * (a stream underneath), which costs more than hashing a fixture's small files and outputs.
 */
export function sha256(data: string | Buffer): string {
  hash ??= (createRequire(import.meta.url)('node:crypto') as typeof import('node:crypto')).hash;
  return hash('sha256', data, 'hex');
}
