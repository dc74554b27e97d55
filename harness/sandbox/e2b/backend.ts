import { randomBytes } from 'node:crypto';
import { describeError, RedgreenError } from '../../errors.js';
import { CircuitBreaker, DEFAULT_BREAKER, type BreakerOptions } from './breaker.js';
import { createSandbox, killQuietly, type Created, type CreationStats, type CreatorDeps, type KnownRoot } from './creator.js';
import { remoteEnv } from './env.js';
import { isAuthFailure } from './errors.js';
import { gcSandboxes, killById, listLabelled, runMetadata, SESSION_KEY, type GcReport } from './gc.js';
import { CreationLimiter, DEFAULT_CREATION_RATE, type LimiterOptions, type LimiterStats } from './limiter.js';
import { DEFAULT_RETRY, type RetryPolicy } from './retry.js';
import { E2BSandbox, type E2BSandboxContext } from './sandbox.js';
import type { RunPlan, Sandbox, SandboxBackend, SandboxSpec } from '../core/types.js';
import { WarmPool } from '../core/warm-pool.js';
import { setSandboxTimeout } from './wire/api.js';
import { resolveConnection, type E2BConnection } from './wire/connection.js';

export interface E2BBackendOptions {
  /** Template name or id; without it, a fixture's `image` is used as the template. */
  template?: string;
  /** Default: E2B_API_KEY. Any non-empty value for a service without keys (CubeSandbox). */
  apiKey?: string;
  /** Control-plane URL (self-hosted E2B, CubeSandbox's cube-api). Default: E2B_API_URL, else https://api.<domain>. */
  apiUrl?: string;
  /** Default: E2B_DOMAIN, else e2b.app. */
  domain?: string;
  /** One URL for every sandbox's envd (a proxy routing on E2b-Sandbox-Id). Default: E2B_SANDBOX_URL. */
  sandboxUrl?: string;
  /** The envd user; an old envd (CubeSandbox's 0.2) has no default user, so pass `root` there. */
  user?: string;
  /** The E2B timeout of each sandbox: how long an orphan outlives a dead harness. Renewed while in use. */
  lifetimeMs?: number;
  requestTimeoutMs?: number;
  /** Host variables to pass into sandboxes (--pass-env). */
  passEnv?: readonly string[];
  /** Sandboxes kept created and initialised ahead of demand (0: none). */
  warm?: number;
  limits?: Partial<LimiterOptions>;
  retry?: Partial<RetryPolicy>;
  breaker?: Partial<BreakerOptions>;
}

export interface E2BStats extends CreationStats {
  poolHits: number;
  live: number;
  killFailures: number;
  breakerOpened: number;
  limiter: LimiterStats;
}

/** Where requests go (wire/connection.ts: the SDK's variables, with the same defaults); a missing key is a usage error. */
export function e2bConnection(
  o: Pick<E2BBackendOptions, 'apiKey' | 'apiUrl' | 'domain' | 'sandboxUrl' | 'requestTimeoutMs'>,
): E2BConnection {
  const c = resolveConnection(o);
  if (!c)
    throw new RedgreenError(
      'USAGE',
      'the e2b backend needs an API key',
      'set E2B_API_KEY (any non-empty value for a CubeSandbox without keys)',
    );
  return c;
}

/**
 * Sandboxes on E2B — the cloud, a self-hosted E2B, or an E2B-compatible service such as
 * CubeSandbox — over the wire protocols the official `e2b` SDK speaks (wire/). A run calls
 * `open(runId)` first (orphans of dead runs are killed, the key is checked, the pool warms up) and
 * `close()` last, also after Ctrl-C:
 * every sandbox this instance made is killed, including one the service finished creating after
 * we stopped waiting for it, as long as it exists by then (later ones: `gc`, or their timeout).
 */
export class E2BBackend implements SandboxBackend {
  readonly name = 'e2b';
  readonly connection: E2BConnection;
  /** Labels every sandbox this instance creates: what close() sweeps. */
  readonly session = randomBytes(6).toString('hex');
  readonly limiter: CreationLimiter;
  readonly breaker: CircuitBreaker;
  private readonly creation: CreationStats = { created: 0, failedAttempts: 0, retries: 0 };
  private readonly live = new Set<E2BSandbox>();
  /** Sandboxes whose kill failed: tried again at close(); their E2B timeout is the last resort. */
  private readonly unconfirmed = new Set<string>();
  private pool: WarmPool<Created> | null = null;
  /**
   * Per template, the root an init found: later sandboxes are created on it, without an init
   * (creator.ts). Null once a sandbox's home was not there: that template is not assumed again.
   */
  private readonly roots = new Map<string, KnownRoot | null>();
  private closing: Promise<void> | null = null;
  private readonly lifetimeMs: number;
  private readonly requestTimeoutMs: number;

  constructor(private readonly o: E2BBackendOptions = {}) {
    this.lifetimeMs = o.lifetimeMs ?? 300_000;
    this.requestTimeoutMs = o.requestTimeoutMs ?? 30_000;
    this.connection = e2bConnection(o);
    this.limiter = new CreationLimiter({ ...DEFAULT_CREATION_RATE, ...o.limits });
    this.breaker = new CircuitBreaker({ ...DEFAULT_BREAKER, ...o.breaker });
  }

  private get creator(): CreatorDeps {
    return {
      connection: this.connection,
      user: this.o.user,
      lifetimeMs: this.lifetimeMs,
      requestTimeoutMs: this.requestTimeoutMs,
      limiter: this.limiter,
      breaker: this.breaker,
      retry: { ...DEFAULT_RETRY, ...this.o.retry },
      stats: this.creation,
    };
  }

  private async kill(sandboxId: string): Promise<void> {
    if (await killQuietly(this.connection, sandboxId)) this.unconfirmed.delete(sandboxId);
    else this.unconfirmed.add(sandboxId);
  }

  /**
   * The warm pool: a fixture that finds no sandbox ready waits for one already on its way (the
   * service limits how fast sandboxes are made); one idle for half its E2B timeout is discarded,
   * since its timeout is not renewed while it waits.
   */
  private warmPool(runId: string): WarmPool<Created> | null {
    if (!this.o.warm || !this.o.template) return null;
    const template = this.o.template;
    this.pool ??= new WarmPool({
      size: this.o.warm,
      make: () => this.make(template, runId),
      discard: (c) => this.kill(c.envd.sandboxId),
      maxIdleMs: this.lifetimeMs / 2,
    });
    return this.pool;
  }

  /** A new sandbox, on the template's known root when there is one; the first init teaches it to later ones. */
  private async make(template: string, runId: string): Promise<Created> {
    const known = this.roots.get(template);
    const made = await createSandbox(this.creator, template, runMetadata(runId, this.session), known ?? undefined);
    if (made.installed && !this.roots.has(template)) this.roots.set(template, { root: made.root, sandboxId: made.envd.sandboxId });
    return made;
  }

  /** Start of a run: kills what dead runs left behind, checks the credentials, warms the pool (no more than `plan` can use). */
  async open(runId: string, plan?: RunPlan): Promise<GcReport & { error?: string }> {
    let report: GcReport & { error?: string };
    try {
      report = await gcSandboxes({ connection: this.connection, keepRun: runId });
    } catch (e) {
      if (isAuthFailure(e))
        throw new RedgreenError(
          'USAGE',
          `e2b: the service refused the API key: ${describeError(e)}`,
          'check E2B_API_KEY, and E2B_API_URL / E2B_DOMAIN for a self-hosted service',
        );
      // A service that cannot list is no reason not to run; its orphans still die by their timeout.
      report = { listed: 0, killed: [], kept: [], failed: [], error: describeError(e) };
    }
    const pool = this.warmPool(runId);
    if (plan) pool?.expect(plan.sandboxes);
    void pool?.fill();
    return report;
  }

  /** Resolves once the warm pool's creations in flight have finished (bench and tests). */
  async warmed(): Promise<void> {
    await this.pool?.settled();
  }

  async create(spec: SandboxSpec): Promise<Sandbox> {
    if (this.closing) throw new RedgreenError('SANDBOX_FAILED', 'e2b: the backend is closed (the run is ending)');
    const template = this.o.template ?? spec.image;
    if (!template)
      throw new RedgreenError('USAGE', 'the e2b backend needs a template', 'pass --template <name or id> (or set `image` in the fixture)');
    let warm = template === this.o.template ? await this.warmPool(spec.runId)?.next() : undefined;
    if (warm?.assumedFrom && this.roots.get(template) === null) {
      // Made on a root since found wrong: it would fail at its first call.
      await this.kill(warm.envd.sandboxId);
      warm = undefined;
    }
    const made = warm ?? (await this.make(template, spec.runId));
    const context: E2BSandboxContext = {
      user: this.o.user,
      requestTimeoutMs: this.requestTimeoutMs,
      lifetimeMs: this.lifetimeMs,
      env: remoteEnv({ host: process.env, passEnv: this.o.passEnv, fixed: {} }),
      kill: (id) => this.kill(id),
      renew: (id) => setSandboxTimeout(this.connection, id, this.lifetimeMs),
      onDestroyed: (s) => this.live.delete(s),
      onRootMismatch: () => void this.roots.set(template, null),
    };
    const sb = new E2BSandbox(made.envd, made.root, context, made.installed);
    this.live.add(sb);
    if (this.closing) {
      await sb.destroy();
      throw new RedgreenError('SANDBOX_FAILED', 'e2b: the backend closed while a sandbox was being created');
    }
    return sb;
  }

  /** End of a run, also after Ctrl-C: idempotent; never throws. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      await this.pool?.drain();
      await Promise.allSettled([...this.live].map((s) => s.destroy()));
      const ids = new Set(this.unconfirmed);
      // Creations the service finished after we stopped waiting are only known to it: ask it.
      for (const s of await listLabelled(this.connection, { [SESSION_KEY]: this.session }).catch(() => [])) ids.add(s.sandboxId);
      await Promise.allSettled(
        [...ids].map(async (id) => {
          await killById(this.connection, id);
          this.unconfirmed.delete(id);
        }),
      );
    })();
    return this.closing;
  }

  stats(): E2BStats {
    return {
      ...this.creation,
      poolHits: this.pool?.hits ?? 0,
      live: this.live.size,
      killFailures: this.unconfirmed.size,
      breakerOpened: this.breaker.opened,
      limiter: { ...this.limiter.stats },
    };
  }
}
