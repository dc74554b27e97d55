import type { Command } from 'commander';
import path from 'node:path';
import type { z } from 'zod';
import { findConfig, loadConfigFile } from '../config/file.js';
import { RedgreenError } from '../errors.js';
import { reportersFrom, splitReporterFlags } from './reporter-spec.js';
import { agentRunOptionsSchema, parseOptions, type OptionSources, type OptionStyle } from './options.js';
import { shownPath } from '../config/paths.js';

/** Options that name this invocation's work, never a project's settings: not in a config file. */
const NOT_IN_CONFIG = new Set(['ids', 'tag', 'shard', 'json', 'resume', 'force', 'config', 'write']);
/** Config values that are paths, taken from the config file's folder. */
const PATH_KEYS = ['root', 'fixtures', 'oracles', 'reports', 'transcripts', 'patches'] as const;

/** The keys a config file may set: every option of `run` (a superset of selfcheck's) but the per-invocation ones. */
export const configKeys = (): string[] => Object.keys(agentRunOptionsSchema().shape).filter((k) => !NOT_IN_CONFIG.has(k));

interface ProjectConfig {
  values: Record<string, unknown>;
  sources: OptionSources;
}

/** The config file `config` names, else the nearest one up from the working folder, checked and with absolute paths. */
export async function projectConfig(config: unknown): Promise<ProjectConfig> {
  if (config === false) return { values: {}, sources: {} };
  const file = typeof config === 'string' ? config : findConfig(process.cwd());
  if (!file) return { values: {}, sources: {} };
  const loaded = await loadConfigFile(file);
  const shown = shownPath(loaded.file);
  if (typeof loaded.values !== 'object' || loaded.values === null || Array.isArray(loaded.values))
    throw new RedgreenError('CONFIG_INVALID', `${shown}: must export an object (export default defineConfig({ … }))`);
  const values: Record<string, unknown> = { ...(loaded.values as Record<string, unknown>) };
  delete values.$schema;
  const allowed = configKeys();
  const unknown = Object.keys(values).filter((k) => !allowed.includes(k));
  if (unknown.length)
    throw new RedgreenError(
      'CONFIG_INVALID',
      `${shown}: unknown option${unknown.length > 1 ? 's' : ''} ${unknown.map((k) => `"${k}"`).join(', ')}`,
      `a config sets: ${allowed.join(', ')}`,
    );
  for (const k of PATH_KEYS) if (typeof values[k] === 'string') values[k] = path.resolve(loaded.dir, values[k] as string);
  if ('reporter' in values) values.reporter = reportersFrom(loaded.dir, values.reporter);
  // The project is where its config is, unless the config says otherwise.
  values.root ??= loaded.dir;
  return { values, sources: Object.fromEntries(Object.keys(values).map((k) => [k, `${shown}: "${k}"`])) };
}

/**
 * One command's options: its config file's values (those the command has), then what the user
 * gave (flags typed on the CLI, or the API's object) on top, validated by the command's schema.
 * The schema is built after the config file loads: a backend it registers brings its own options.
 */
export async function resolveOptions<S extends z.ZodObject>(
  schemaOf: () => S,
  given: Record<string, unknown>,
  style: OptionStyle,
): Promise<z.infer<S>> {
  const config = await projectConfig(given.config);
  const schema = schemaOf();
  const merged: Record<string, unknown> = {};
  const sources: OptionSources = {};
  for (const [k, v] of Object.entries(config.values)) {
    if (!(k in schema.shape)) continue;
    merged[k] = v;
    sources[k] = config.sources[k]!;
  }
  for (const [k, v] of Object.entries(given)) {
    if (v === undefined) continue;
    merged[k] = v;
    delete sources[k];
  }
  return parseOptions(schema, merged, style, sources);
}

/**
 * What the user typed, and nothing commander filled in by default: a config file's value must
 * win over a default, and a typed flag over the config file.
 */
export function typedOptions(cmd: Command): Record<string, unknown> {
  const opts = cmd.opts();
  const typed: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(opts)) if (cmd.getOptionValueSource(k) === 'cli') typed[k] = v;
  if (Array.isArray(typed.reporter)) typed.reporter = splitReporterFlags(typed.reporter as string[]);
  return typed;
}
