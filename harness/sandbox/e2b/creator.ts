import { RedgreenError } from '../../errors.js';
import type { CircuitBreaker } from './breaker.js';
import { isAuthFailure, isBackpressure, isTransient, sandboxFailure } from './errors.js';
import type { CreationLimiter } from './limiter.js';
import { backoffMs, withRetry, type RetryPolicy } from './retry.js';
import { killById } from './gc.js';
import { HELPER_PATH, helperScript, rootCommand } from './script.js';
import { createSandbox as apiCreate } from './wire/api.js';
import type { E2BConnection } from './wire/connection.js';
import { Envd } from './wire/envd.js';

/** A created sandbox, ready to be handed out. */
export interface Created {
  envd: Envd;
  root: string;
  /** The helper is in place (the init ran); else its first call installs it, checking `root`. */
  installed: boolean;
  /** What `root` was assumed from, when it was. */
  assumedFrom?: KnownRoot;
}

/**
 * The root folder one sandbox's init found. Every sandbox of a template has the same home, so
 * later ones are created without an init, on this root: their first call checks it (prelude.ts).
 * A root that names its sandbox (the test double keeps each sandbox in a folder named by its id,
 * where a VM has the same path in every sandbox) is assumed with the new sandbox's id in its place.
 */
export interface KnownRoot {
  root: string;
  sandboxId: string;
}

export const assumeRoot = (k: KnownRoot, sandboxId: string): string => k.root.split(k.sandboxId).join(sandboxId);

export interface CreationStats {
  created: number;
  failedAttempts: number;
  retries: number;
}

export interface CreatorDeps {
  connection: E2BConnection;
  user: string | undefined;
  lifetimeMs: number;
  requestTimeoutMs: number;
  limiter: CreationLimiter;
  breaker: CircuitBreaker;
  retry: RetryPolicy;
  stats: CreationStats;
}

const INIT_TIMEOUT_MS = 60_000;

/** Kills a sandbox that will not be used, retrying (gc.ts killById); false when that failed too (its timeout remains). */
export async function killQuietly(c: E2BConnection, sandboxId: string): Promise<boolean> {
  return killById(c, sandboxId).then(
    () => true,
    () => false,
  );
}

/**
 * Installs the helper with one upload; envd answers with the absolute path it wrote, which gives
 * the root folder without a command. An envd that answers with the relative path costs a command.
 */
async function initialise(d: CreatorDeps, envd: Envd): Promise<string> {
  const o = { ...(d.user ? { user: d.user } : {}), requestTimeoutMs: d.requestTimeoutMs };
  const written = await envd.writeFile(HELPER_PATH, Buffer.from(helperScript()), o);
  if (written.startsWith('/') && written.endsWith(`/${HELPER_PATH}`)) return written.slice(0, -'/bin/rg'.length);
  const r = await envd.run(rootCommand(), { ...o, timeoutMs: INIT_TIMEOUT_MS });
  // A template that cannot run the root command will not get better on retry: say why, once.
  if (r.exitCode !== 0)
    throw new RedgreenError(
      'SANDBOX_FAILED',
      `e2b: preparing sandbox ${envd.sandboxId} failed (exit ${r.exitCode}): ${r.stderr.trim()}`,
      'the template needs a POSIX shell, tar, base64 and a writable $HOME',
    );
  const root = r.stdout.trim();
  if (!root.startsWith('/')) throw new Error(`the sandbox reported no home folder (${JSON.stringify(root)})`);
  return root;
}

/**
 * Creates one sandbox: a creation slot from the limiter, the breaker's consent, the API call with
 * the run's labels and lifetime, then the init (unless the root is `known`: one request instead of
 * two). Transient failures are retried with backoff and jitter; a 429/503 also pauses every other
 * creation. A sandbox whose init failed is killed before the next attempt. Whatever fails in the
 * end is SANDBOX_FAILED (an infra error).
 */
export async function createSandbox(
  d: CreatorDeps,
  template: string,
  metadata: Record<string, string>,
  known?: KnownRoot,
): Promise<Created> {
  const attempt = async (n: number): Promise<Created> => {
    d.breaker.check();
    const release = await d.limiter.acquire();
    let envd: Envd;
    try {
      const access = await apiCreate(d.connection, template, { metadata, lifetimeMs: d.lifetimeMs });
      envd = new Envd(d.connection, access);
    } catch (e) {
      d.stats.failedAttempts++;
      d.breaker.failure(e);
      if (isBackpressure(e)) d.limiter.pause(backoffMs(d.retry, n));
      throw e;
    } finally {
      release();
    }
    try {
      const made: Created = known
        ? { envd, root: assumeRoot(known, envd.sandboxId), installed: false, assumedFrom: known }
        : { envd, root: await initialise(d, envd), installed: true };
      d.breaker.success();
      d.stats.created++;
      return made;
    } catch (e) {
      d.stats.failedAttempts++;
      d.breaker.failure(e);
      await killQuietly(d.connection, envd.sandboxId);
      throw e;
    }
  };
  try {
    return await withRetry(attempt, d.retry, { isTransient, onRetry: () => void d.stats.retries++ });
  } catch (e) {
    const hint = isAuthFailure(e)
      ? 'check E2B_API_KEY (and E2B_API_URL / E2B_DOMAIN for a self-hosted service); an envd older than 0.4 (CubeSandbox) needs the user named: --e2b-user root'
      : undefined;
    throw sandboxFailure(`could not create a sandbox from template "${template}"`, e, hint);
  }
}
