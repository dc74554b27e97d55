import type { LimitHit } from './limits.js';
import type { ReadTree } from './tree.js';

/**
 * The one Sandbox contract every backend implements (local, bwrap, docker, e2b).
 * Paths given to file methods are relative to the workspace unless absolute; a backend refuses
 * any path that resolves outside the workspace or its scratch folder.
 */
export type OutputStream = 'stdout' | 'stderr';

export interface ExecOptions {
  /** Working directory, relative to the workspace (default: the workspace itself). */
  cwd?: string;
  /** Extra variables on top of the sandbox's allowlisted environment. */
  env?: Record<string, string>;
  timeoutMs?: number;
  /** Bytes kept per stream; the rest is counted and hashed, not kept. */
  maxOutputBytes?: number;
  onOutput?: (stream: OutputStream, chunk: Buffer) => void;
  signal?: AbortSignal;
  /** Isolating backends cut the network unless a phase opts in (setup installs). */
  network?: boolean;
}

export interface StreamCapture {
  /** Kept text (head and tail when truncated), decoded as UTF-8 with replacement. */
  text: string;
  /** Bytes the stream produced in total. */
  bytes: number;
  /** sha256 of the whole stream, kept or not. */
  sha256: string;
  truncated: boolean;
  /** False when the stream was not valid UTF-8 (the text then has U+FFFD replacements). */
  utf8: boolean;
}

export interface ExecResult {
  /** The process's exit code; 128 + signal number when it was killed by a signal. */
  exitCode: number;
  signal: string | null;
  stdout: string;
  stderr: string;
  stdoutInfo: StreamCapture;
  stderrInfo: StreamCapture;
  timedOut: boolean;
  /** Stopped because the caller's AbortSignal fired. */
  aborted: boolean;
  truncated: boolean;
  durationMs: number;
  /**
   * A sandbox limit the command ran into (out of memory, disk full, file too big, no more
   * processes), where the backend can tell: bwrap and Docker/Podman can, local and E2B cannot.
   */
  limit?: LimitHit;
}

export interface FileToWrite {
  path: string;
  content: Buffer | string;
  /** Unix mode bits (e.g. 0o755); default 0o644. */
  mode?: number;
}

export interface UploadStats {
  files: number;
  bytes: number;
}

export interface UploadOptions {
  exclude?: readonly string[];
  skip?: readonly string[];
  /**
   * hostDir as the caller walked and read it already (a fixture's fingerprint): the upload takes its
   * entries, less `skip`, and its bytes instead of reading the tree again. Ignored with `exclude`.
   */
  tree?: ReadTree;
}

export interface SandboxSpec {
  runId: string;
  fixtureId: string;
  /** Container/remote backends: the image or template. */
  image?: string;
}

export interface Sandbox {
  readonly id: string;
  readonly backend: string;
  /** Absolute path of the workspace inside the sandbox. */
  readonly workdir: string;
  /** Absolute path of a private scratch folder (reports, helpers), outside the workspace. */
  readonly scratchDir: string;
  exec(command: string | readonly string[], options?: ExecOptions): Promise<ExecResult>;
  /**
   * Copies a host folder into the workspace, refusing symlinks that leave it. `exclude` names
   * files or folders skipped at any depth, `skip` paths relative to the folder.
   */
  uploadDir(hostDir: string, options?: UploadOptions): Promise<UploadStats>;
  writeFiles(files: readonly FileToWrite[]): Promise<void>;
  removeFiles(paths: readonly string[]): Promise<void>;
  readFile(path: string): Promise<Buffer>;
  /**
   * Streams a sandbox file into a new host file, never whole in memory (big archives: the setup
   * cache). Optional: `core/transfer.ts` falls back to readFile for a backend without it.
   */
  downloadFile?(path: string, hostFile: string): Promise<void>;
  /** Streams a host file, from byte `start`, into the sandbox (see downloadFile). */
  uploadFile?(hostFile: string, path: string, options?: { start?: number; mode?: number }): Promise<void>;
  /**
   * Starts the (still empty) workspace as a copy-on-write view of `tree`, a host folder that stays
   * unchanged while any sandbox uses it: ready at once, whatever its size. Optional, and false
   * when this sandbox cannot (the caller uploads instead).
   */
  startFrom?(tree: string): Promise<boolean>;
  /** Copies the workspace as it is now (modes, times, links) into `dest`, a new host folder; false when it cannot. */
  saveWorkspace?(dest: string): Promise<boolean>;
  /**
   * Prepared layers its engine keeps, for a backend whose workspace is not a host folder (Docker):
   * `startLayer` starts the still-empty workspace copy-on-write from the layer `key` (its size, and
   * `ahead` when its container was started before the sandbox asked (expectLayer); null when there
   * is none or it cannot), noting the use in the cache's `cacheDir` (with a
   * `cacheDir`, only a layer noted there, as every layer that cache saved is, is looked for); `saveLayer`
   * keeps the workspace as it is now as that layer (why not, or null), the least recently used
   * layers of the same cache (`scope`, at `cacheDir`) going beyond `maxBytes`.
   */
  startLayer?(key: string, info?: { cacheDir: string }): Promise<{ bytes: number; ahead?: boolean } | null>;
  saveLayer?(key: string, info: { fixture: string; maxBytes: number; scope: string; cacheDir: string }): Promise<string | null>;
  /** Idempotent, never throws: kills every process and removes every resource. */
  destroy(): Promise<void>;
}

/** What a run will ask of its backend, as far as it is known before it starts. */
export interface RunPlan {
  /** The most create() calls the run will make (sandboxesPerFixture × its fixtures). */
  sandboxes: number;
}

export interface SandboxBackend {
  readonly name: string;
  create(spec: SandboxSpec): Promise<Sandbox>;
  /** Start of a run: orphans of dead runs are cleaned up, a warm pool fills (no more than `plan` can use). */
  open?(runId: string, plan?: RunPlan): Promise<unknown>;
  /** End of a run, also after Ctrl-C: releases everything still held (pools). Never throws. */
  close?(): Promise<void>;
  /**
   * A sandbox of `spec` will soon start from the prepared layer `key` of the cache at `cacheDir`
   * (the scheduler looks ahead): a backend whose sandboxes take long to start over a layer may
   * start one now, for that sandbox's startLayer to take. Returns the withdrawal, called once the
   * fixture ended (what its sandbox did not take is discarded). Optional (absent: nothing to
   * gain); never throws.
   */
  expectLayer?(spec: SandboxSpec, layer: { key: string; cacheDir: string }): () => void;
  /** How many sandboxes expectLayer may have started ahead at once: the scheduler announces that many fixtures beyond the running ones. */
  readonly startsAhead?: number;
}
