import { RedgreenError } from '../errors.js';

/** The setup cache's size cap, unless REDGREEN_CACHE_MAX says otherwise. */
export const DEFAULT_CACHE_MAX_BYTES = 2 * 1024 ** 3;
export const CACHE_MAX_ENV = 'REDGREEN_CACHE_MAX';

const UNITS: Record<string, number> = { '': 1, b: 1, k: 1024, kb: 1000, kib: 1024, m: 1024 ** 2, mb: 1000 ** 2, mib: 1024 ** 2 };
UNITS.g = UNITS.gib = 1024 ** 3;
UNITS.gb = 1000 ** 3;
UNITS.t = UNITS.tib = 1024 ** 4;
UNITS.tb = 1000 ** 4;

/** A size such as `2GiB`, `500MB`, `512m` or `1048576` (bytes), or null when it is not one. */
export function parseSize(text: string): number | null {
  const m = /^\s*(\d+(?:\.\d+)?)\s*([a-z]*)\s*$/i.exec(text);
  const unit = m ? UNITS[m[2]!.toLowerCase()] : undefined;
  return m && unit !== undefined ? Math.floor(Number(m[1]) * unit) : null;
}

/** The cap from the environment (a bad value is a usage error naming the variable), else the default. */
export function cacheMaxBytes(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env[CACHE_MAX_ENV];
  if (raw === undefined || raw === '') return DEFAULT_CACHE_MAX_BYTES;
  const n = parseSize(raw);
  if (n === null)
    throw new RedgreenError(
      'USAGE',
      `${CACHE_MAX_ENV}=${JSON.stringify(raw)} is not a size`,
      'use a size such as 2GiB, 500MB or 0 (no cache kept)',
    );
  return n;
}
