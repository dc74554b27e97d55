import Docker from 'dockerode';
import { describeError, RedgreenError } from '../../errors.js';

/**
 * Which engine a client talks to (Docker, or another engine speaking its API such as Podman):
 * how messages name it, what to do when it is down, and rlimits its containers must be given.
 */
export interface EngineProfile {
  /** The backend it serves (docker, podman): messages and hints name it. */
  backend: string;
  /** "the Docker engine", "the Podman service". */
  label: string;
  address: string;
  hint: string;
  /** Set on every container (an engine whose defaults exceed what this host allows). */
  ulimits?: { Name: string; Soft: number; Hard: number }[];
}

const profiles = new WeakMap<Docker, EngineProfile>();

/** The engine's address as a user would name it in a message. */
export function engineAddress(): string {
  return process.env.DOCKER_HOST || 'unix:///var/run/docker.sock';
}

const ENGINE_HINT =
  'start a Docker engine and point DOCKER_HOST at it, e.g. `dockerd &` (default socket), or in the redgreen repository `eval "$(bash test/helpers/docker-start.sh)"`';

/** A client for an engine that speaks the Docker Engine API, with its profile attached. */
export function engineClient(profile: EngineProfile, options?: Docker.DockerOptions): Docker {
  const docker = new Docker(options);
  profiles.set(docker, profile);
  return docker;
}

/**
 * A client for the engine the docker CLI would use: DOCKER_HOST (unix, tcp, ssh),
 * DOCKER_TLS_VERIFY and DOCKER_CERT_PATH are read by dockerode's defaults, so a remote
 * engine works the same as the local socket.
 */
export function dockerClient(): Docker {
  return engineClient({ backend: 'docker', label: 'the Docker engine', address: engineAddress(), hint: ENGINE_HINT });
}

/** The profile of a client (a client made elsewhere counts as Docker's). */
export function profileOf(docker: Docker | undefined): EngineProfile {
  return (docker && profiles.get(docker)) ?? { backend: 'docker', label: 'the Docker engine', address: engineAddress(), hint: ENGINE_HINT };
}

/** Stable code for "the engine cannot be reached"; one place to change if errors.ts grows a code for it. */
export function engineUnreachable(cause: unknown, docker?: Docker): RedgreenError {
  const p = profileOf(docker);
  return new RedgreenError('SANDBOX_FAILED', `${p.label} at ${p.address} is not reachable: ${describeError(cause)}`, p.hint, { cause });
}

/** Fails fast, with a hint, when no engine answers (a hung TCP host included). */
export async function pingEngine(docker: Docker, timeoutMs = 10_000): Promise<void> {
  try {
    // dockerode's typings miss ping's options; the abort signal is honoured by docker-modem.
    await (docker.ping as unknown as (o: { abortSignal: AbortSignal }) => Promise<unknown>)({
      abortSignal: AbortSignal.timeout(timeoutMs),
    });
  } catch (e) {
    throw engineUnreachable(e, docker);
  }
}

/** The HTTP status an engine call failed with, if it was an HTTP error. */
export function statusOf(e: unknown): number | undefined {
  const code = (e as { statusCode?: unknown } | null)?.statusCode;
  return typeof code === 'number' ? code : undefined;
}

/** Wraps an engine failure so the pipeline reports it as infrastructure, never as a test result. */
export function engineFailure(what: string, cause: unknown, docker?: Docker): RedgreenError {
  if (cause instanceof RedgreenError) return cause;
  const code = (cause as { code?: unknown } | null)?.code;
  if (code === 'ECONNREFUSED' || code === 'ENOENT' || code === 'EACCES') return engineUnreachable(cause, docker);
  const json = (cause as { json?: { message?: unknown } } | null)?.json;
  const detail = typeof json?.message === 'string' ? json.message : describeError(cause);
  return new RedgreenError('SANDBOX_FAILED', `${profileOf(docker).backend}: ${what}: ${detail}`, undefined, { cause });
}

/** Docker's `Env` list from a variable map. */
export function envList(env: Record<string, string>): string[] {
  return Object.entries(env).map(([k, v]) => `${k}=${v}`);
}
