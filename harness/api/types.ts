import type { z } from 'zod';
import type { AgentRunBaseSchema, SelfcheckBaseSchema, PathOptionsSchema } from '../commands/options.js';
import type { ReplayBaseSchema } from '../commands/replay.js';
import type { CompareOptionsSchema } from '../commands/compare.js';
import type { ProgressEvent } from './progress.js';

/**
 * The built-in backends' own options (the CLI's --pool, --template …), as the API and config
 * files take them. test/unit/api-types.test.ts checks they match each descriptor's schema.
 */
export interface BackendOptions {
  /** docker, podman: containers kept started and ready. */
  pool?: number | string;
  /** e2b: template name or id (default: $E2B_TEMPLATE). */
  template?: string;
  /** e2b: envd user; CubeSandbox needs root (default: $E2B_USER). */
  e2bUser?: string;
  /** e2b: sandboxes kept created ahead of demand. */
  warm?: number | string;
  /** e2b: sandbox creations per second at most. */
  createRate?: number | string;
}

/** What every API call that runs sandboxes takes besides the CLI's options. */
export interface CallOptions {
  /** Aborting it stops the run as Ctrl-C does: every sandbox destroyed, what finished reported (`interrupted: true`). */
  signal?: AbortSignal;
  /** Every step of the run as an event (run and fixture start and end, each phase, warnings). */
  onProgress?: (event: ProgressEvent) => void;
}

type Cli<S extends z.ZodType> = Omit<z.input<S>, 'json'>;

/** `selfcheck()`: the options of `redgreen selfcheck`, by their long names (`ids` are the positional fixture ids or globs). */
export type SelfcheckOptions = Cli<typeof SelfcheckBaseSchema> & BackendOptions & CallOptions;
/** `run()`: the options of `redgreen run`. */
export type RunOptions = Cli<typeof AgentRunBaseSchema> & BackendOptions & CallOptions;
/** `replay()`: the options of `redgreen replay`. */
export type ReplayOptions = Cli<typeof ReplayBaseSchema> & BackendOptions & CallOptions;
/** `compare()`: the options of `redgreen compare`. */
export type CompareOptions = Cli<typeof CompareOptionsSchema>;
/** `mergeReports()`: where the shard reports are and the merged one goes. */
export type MergeOptions = z.input<typeof PathOptionsSchema>;

/**
 * A redgreen.config.{ts,mjs,js,json}: the project's settings, by the same names as the options.
 * Paths are relative to the config file's folder (the project root unless `root` says otherwise).
 * Command-line flags and API options override it.
 */
export type RedgreenConfig = Omit<z.input<typeof AgentRunBaseSchema>, 'ids' | 'tag' | 'shard' | 'json' | 'resume' | 'force' | 'config'> &
  BackendOptions;
