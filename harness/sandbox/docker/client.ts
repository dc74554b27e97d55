import Docker from 'dockerode';
import { describeError, RedgreenError } from '../../errors.js';

/** The engine's address as a user would name it in a message. */
export function engineAddress(): string {
  return process.env.DOCKER_HOST || 'unix:///var/run/docker.sock';
}

/**
 * A client for the engine the docker CLI would use: DOCKER_HOST (unix, tcp, ssh),
 * DOCKER_TLS_VERIFY and DOCKER_CERT_PATH are read by dockerode's defaults, so a remote
 * engine works the same as the local socket.
 */
export function dockerClient(): Docker {
  return new Docker();
}

const ENGINE_HINT =
  'start a Docker engine and point DOCKER_HOST at it, e.g. `dockerd &` (default socket), or in the redgreen repository `eval "$(bash test/helpers/docker-start.sh)"`';

/** Stable code for "the engine cannot be reached"; one place to change if errors.ts grows a code for it. */
export function engineUnreachable(cause: unknown): RedgreenError {
  return new RedgreenError('SANDBOX_FAILED', `the Docker engine at ${engineAddress()} is not reachable: ${describeError(cause)}`, ENGINE_HINT, { cause });
}

/** Fails fast, with a hint, when no engine answers (a hung TCP host included). */
export async function pingEngine(docker: Docker, timeoutMs = 10_000): Promise<void> {
  try {
    // dockerode's typings miss ping's options; the abort signal is honoured by docker-modem.
    await (docker.ping as unknown as (o: { abortSignal: AbortSignal }) => Promise<unknown>)({ abortSignal: AbortSignal.timeout(timeoutMs) });
  } catch (e) {
    throw engineUnreachable(e);
  }
}

/** The HTTP status an engine call failed with, if it was an HTTP error. */
export function statusOf(e: unknown): number | undefined {
  const code = (e as { statusCode?: unknown } | null)?.statusCode;
  return typeof code === 'number' ? code : undefined;
}

/** Wraps an engine failure so the pipeline reports it as infrastructure, never as a test result. */
export function engineFailure(what: string, cause: unknown): RedgreenError {
  if (cause instanceof RedgreenError) return cause;
  const code = (cause as { code?: unknown } | null)?.code;
  if (code === 'ECONNREFUSED' || code === 'ENOENT' || code === 'EACCES') return engineUnreachable(cause);
  const json = (cause as { json?: { message?: unknown } } | null)?.json;
  const detail = typeof json?.message === 'string' ? json.message : describeError(cause);
  return new RedgreenError('SANDBOX_FAILED', `docker: ${what}: ${detail}`, undefined, { cause });
}

/** Docker's `Env` list from a variable map. */
export function envList(env: Record<string, string>): string[] {
  return Object.entries(env).map(([k, v]) => `${k}=${v}`);
}
