import {
  AuthenticationError,
  InvalidArgumentError,
  NotFoundError,
  RateLimitError,
  SandboxError,
  ServiceBusyError,
  TemplateError,
  TimeoutError,
} from 'e2b';
import { describeError, RedgreenError } from '../../errors.js';

/**
 * How the e2b backend reads the SDK's failures. The SDK's errors are classes (RateLimitError for a
 * 429, ServiceBusyError for a 503, SandboxError with `statusCode` for other statuses, TimeoutError
 * for request timeouts and dead sandboxes); a dropped connection surfaces from undici as a
 * TypeError (`fetch failed`) or an error whose code names the socket failure.
 */
const NETWORK_CODES = new Set([
  'ECONNRESET',
  'ECONNREFUSED',
  'EPIPE',
  'ETIMEDOUT',
  'EAI_AGAIN',
  'UND_ERR_SOCKET',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
]);

function networkCode(e: unknown): string | undefined {
  for (let cur: unknown = e, depth = 0; cur && depth < 4; cur = (cur as { cause?: unknown }).cause, depth++) {
    const code = (cur as { code?: unknown }).code;
    if (typeof code === 'string' && NETWORK_CODES.has(code)) return code;
  }
  return undefined;
}

/** Failures worth another try: the service said "later" (429, 5xx), a request timed out, or the network dropped. */
export function isTransient(e: unknown): boolean {
  if (e instanceof RateLimitError || e instanceof ServiceBusyError || e instanceof TimeoutError) return true;
  if (e instanceof AuthenticationError || e instanceof InvalidArgumentError || e instanceof TemplateError || e instanceof NotFoundError)
    return false;
  if (e instanceof SandboxError) return e.statusCode === undefined || e.statusCode >= 500 || e.statusCode === 408;
  if (e instanceof Error && (e.name === 'TimeoutError' || (e.name === 'TypeError' && /fetch failed/.test(e.message)))) return true;
  return networkCode(e) !== undefined;
}

/** The service asked us to slow down (429) or is overloaded (503): every creation should back off, not just this one. */
export function isBackpressure(e: unknown): boolean {
  return e instanceof RateLimitError || e instanceof ServiceBusyError || (e instanceof SandboxError && e.statusCode === 503);
}

export function isAuthFailure(e: unknown): boolean {
  return e instanceof AuthenticationError;
}

/** An infrastructure failure of the sandbox service: the pipeline reports it as infra_error, never as the fixture's fault. */
export function sandboxFailure(what: string, cause: unknown, hint?: string): RedgreenError {
  if (cause instanceof RedgreenError) return cause;
  return new RedgreenError('SANDBOX_FAILED', `e2b: ${what}: ${describeError(cause)}`, hint, { cause });
}
