import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { describeError, jsonProblem, RedgreenError } from '../errors.js';
import { shownPath } from './paths.js';
import { runTimeImport } from './run-time-import.js';

/** The names a project's config may have, in the order they are looked for in each folder. */
export const CONFIG_FILES = ['redgreen.config.ts', 'redgreen.config.mjs', 'redgreen.config.js', 'redgreen.config.json'] as const;

export interface LoadedConfigFile {
  file: string;
  /** The folder relative paths in it are taken from. */
  dir: string;
  /** What the file exports (its default export), not yet validated. */
  values: unknown;
}

/** The nearest config file from `from` up to the filesystem root, like git finds .git. */
export function findConfig(from: string): string | null {
  for (let dir = path.resolve(from); ; dir = path.dirname(dir)) {
    for (const name of CONFIG_FILES) if (existsSync(path.join(dir, name))) return path.join(dir, name);
    if (path.dirname(dir) === dir) return null;
  }
}

/**
 * Loads a config file: JSON as data (errors at line:column), .mjs/.js with Node's own import,
 * .ts through jiti (Node 20 cannot run TypeScript; jiti loads it, ESLint-style, only when a .ts
 * config is there, so other commands never pay for it).
 */
export async function loadConfigFile(file: string): Promise<LoadedConfigFile> {
  const abs = path.resolve(file);
  const shown = shownPath(abs);
  const dir = path.dirname(abs);
  if (!existsSync(abs)) throw new RedgreenError('USAGE', `config file ${shown} does not exist`);
  if (abs.endsWith('.json')) {
    const text = await readFile(abs, 'utf8');
    try {
      return { file: abs, dir, values: JSON.parse(text) as unknown };
    } catch (e) {
      throw new RedgreenError('CONFIG_INVALID', `${shown}: not valid JSON (${jsonProblem(text, e)})`);
    }
  }
  try {
    const mod = abs.endsWith('.ts')
      ? await (await runTimeImport<typeof import('jiti')>('jiti')).createJiti(import.meta.url, { moduleCache: false }).import(abs)
      : await runTimeImport(pathToFileURL(abs).href);
    const values = mod && typeof mod === 'object' && 'default' in mod ? (mod as { default: unknown }).default : mod;
    return { file: abs, dir, values };
  } catch (e) {
    throw new RedgreenError('CONFIG_INVALID', `${shown}: could not be loaded: ${describeError(e)}`, undefined, { cause: e });
  }
}
