import { z } from 'zod';
import type { GcOptions } from './core/gc.js';
import type { SandboxBackend } from './core/types.js';

/** What every backend gets from the run, whatever its own options. */
export interface BackendContext {
  /** Host variables to pass into sandboxes on top of the allowlist (--pass-env). */
  passEnv: readonly string[];
  /** Shared package-manager download caches (npm, pip). */
  cacheDir: string;
}

/** Whether a backend can run here, and if not, why and what to do about it. */
export type Probe = { ok: true; detail?: string } | { ok: false; reason: string; fix: string };

export interface GcRequest {
  /** Only these runs (default: every run whose harness is gone). */
  runIds: readonly string[];
  /** Also what other hosts created on a shared engine or service. */
  allHosts: boolean;
  dryRun: boolean;
}

/** The options of `redgreen gc`'s request, as every backend's gc takes them. */
export function gcOptionsOf(request: GcRequest): GcOptions {
  return {
    allHosts: request.allHosts,
    dryRun: request.dryRun,
    ...(request.runIds.length ? { runIds: request.runIds } : {}),
  };
}

/** What `redgreen gc` prints for one backend: its lines, a summary, the JSON form. */
export interface GcOutcome {
  lines: string[];
  summary: string;
  failed: number;
  json: Record<string, unknown>;
}

/** `redgreen image build` for a backend that runs containers from images. */
export interface ImageBuildRequest {
  tag: string;
  suite: string;
  force: boolean;
  mirror?: string;
  network?: string;
  log: (line: string) => void;
  signal: AbortSignal;
}
export interface ImageBuildResult {
  tag: string;
  id: string;
  built: boolean;
  versions: string;
}

/** One CLI option of a backend; `key` is its field in the backend's options schema. */
export interface BackendFlag {
  flags: string;
  key: string;
  description: string;
  default?: string;
}

/**
 * Everything the rest of redgreen knows about a backend: the CLI's --backend choices and flags,
 * `--backend auto`, `gc`, `doctor`-style probes and the conformance suite all read these. A
 * descriptor loads its backend's code (and SDKs) only when it creates, probes or collects.
 */
export interface BackendDescriptor<S extends z.ZodObject = z.ZodObject> {
  name: string;
  summary: string;
  /** Promises no network and no host filesystem access to what runs inside. */
  isolating: boolean;
  /** A paid or credentialed service: `auto` never picks it. */
  remote: boolean;
  /** `auto` tries local backends from the highest rank down; unranked ones never. */
  autoRank?: number;
  options: S;
  flags: readonly BackendFlag[];
  create(options: z.infer<S>, ctx: BackendContext): Promise<SandboxBackend>;
  probe(options: z.infer<S>, ctx: BackendContext): Promise<Probe>;
  gc?(request: GcRequest, options: z.infer<S>): Promise<GcOutcome>;
  /** Builds the default runtime image into this backend's image store. */
  buildImage?(request: ImageBuildRequest): Promise<ImageBuildResult>;
}

/** Keeps a descriptor's option types tied to its schema. */
export function defineBackend<S extends z.ZodObject>(d: BackendDescriptor<S>): BackendDescriptor<S> {
  return d;
}

/** A probe from a check that throws a RedgreenError-like error (message and hint) when unusable. */
export async function probeBy(check: () => Promise<unknown>, fix: string): Promise<Probe> {
  try {
    await check();
    return { ok: true };
  } catch (e) {
    const err = e as { message?: string; hint?: string };
    return { ok: false, reason: err.message ?? String(e), fix: err.hint ?? fix };
  }
}
