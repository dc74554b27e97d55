import { describeError, RedgreenError } from '../../errors.js';
import { E2BRequestTimeout, E2BServiceError } from './wire/http.js';

/**
 * How the e2b backend reads its wire client's failures (wire/): E2BServiceError carries the HTTP
 * status the service answered (a Connect error's code is mapped onto one), E2BRequestTimeout a
 * request left unanswered, and a dropped connection is Node's error whose code names the socket
 * failure.
 */
const NETWORK_CODES = new Set([
  'ECONNRESET',
  'ECONNABORTED',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'ECONNREFUSED',
  'EPIPE',
  'ETIMEDOUT',
  'EAI_AGAIN',
]);

function networkCode(e: unknown): string | undefined {
  for (let cur: unknown = e, depth = 0; cur && depth < 4; cur = (cur as { cause?: unknown }).cause, depth++) {
    const code = (cur as { code?: unknown }).code;
    if (typeof code === 'string' && NETWORK_CODES.has(code)) return code;
  }
  return undefined;
}

const status = (e: unknown) => (e instanceof E2BServiceError ? e.status : undefined);

/** Failures worth another try: the service said "later" (408, 429, 5xx), a request timed out, or the network dropped. */
export function isTransient(e: unknown): boolean {
  const s = status(e);
  if (s !== undefined) return s === 408 || s === 429 || s >= 500;
  if (e instanceof E2BRequestTimeout) return true;
  return networkCode(e) !== undefined;
}

/** The service asked us to slow down (429) or is overloaded (503): every creation should back off, not just this one. */
export function isBackpressure(e: unknown): boolean {
  return status(e) === 429 || status(e) === 503;
}

export function isAuthFailure(e: unknown): boolean {
  return status(e) === 401 || status(e) === 403;
}

/** The control plane does not know the sandbox (404): it is gone. */
export function isGone(e: unknown): boolean {
  return status(e) === 404;
}

/** An infrastructure failure of the sandbox service: the pipeline reports it as infra_error, never as the fixture's fault. */
export function sandboxFailure(what: string, cause: unknown, hint?: string): RedgreenError {
  if (cause instanceof RedgreenError) return cause;
  return new RedgreenError('SANDBOX_FAILED', `e2b: ${what}: ${describeError(cause)}`, hint, { cause });
}
