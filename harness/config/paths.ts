import { readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The installed package's root (where the bundled fixtures live): the nearest folder above this
 * module with redgreen's package.json. This module may be harness/config/ (the sources), dist/config/
 * (tsc's output) or dist/chunks/ (the CLI's bundle).
 */
export const PACKAGE_ROOT = packageRoot(path.dirname(fileURLToPath(import.meta.url)));

function packageRoot(from: string): string {
  for (let dir = from; ; dir = path.dirname(dir)) {
    try {
      if ((JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')) as { name?: unknown }).name === 'redgreen') return dir;
    } catch {
      // no package.json here, or not JSON: look further up
    }
    if (path.dirname(dir) === dir) return path.resolve(from, '..', '..');
  }
}

/**
 * A path as messages show it, as the user would type it from here: relative below the current
 * folder ('.' for the folder itself), else absolute (never a climb of '../../..').
 */
export function shownPath(p: string): string {
  const rel = path.relative(process.cwd(), p);
  return rel === '' ? '.' : rel.startsWith('..') || path.isAbsolute(rel) ? path.resolve(p) : rel;
}

export function harnessVersion(): string {
  try {
    return (JSON.parse(readFileSync(path.join(PACKAGE_ROOT, 'package.json'), 'utf8')) as { version: string }).version;
  } catch {
    return '0.0.0';
  }
}

/** This user's cache of redgreen (`$XDG_CACHE_HOME/redgreen`, else `~/.cache/redgreen`). */
export function userCacheDir(): string {
  return path.join(process.env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache'), 'redgreen');
}

export interface ProjectPaths {
  root: string;
  fixturesDir: string;
  oraclesDir: string;
  reportsDir: string;
  transcriptsDir: string;
  cacheDir: string;
}

/**
 * A project is a folder with `fixtures/` (and `oracles/`): the given root (a config file's folder
 * when it names none), else the current folder. Never the package's own folder: an installed
 * redgreen must not write reports into node_modules (`redgreen init` copies its starter fixtures).
 */
export function resolvePaths(options: {
  root?: string;
  fixtures?: string;
  oracles?: string;
  reports?: string;
  transcripts?: string;
}): ProjectPaths {
  const root = path.resolve(options.root ?? '.');
  return {
    root,
    fixturesDir: path.resolve(root, options.fixtures ?? 'fixtures'),
    oraclesDir: path.resolve(root, options.oracles ?? 'oracles'),
    reportsDir: path.resolve(root, options.reports ?? 'reports'),
    transcriptsDir: path.resolve(root, options.transcripts ?? 'transcripts'),
    cacheDir: userCacheDir(),
  };
}

export function newRunId(mode: string, label?: string): string {
  const stamp = new Date().toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15);
  const slug = label ? `-${label.replace(/[^A-Za-z0-9_.-]+/g, '_').slice(0, 40)}` : '';
  return `${stamp}-${mode}${slug}-${Math.random().toString(36).slice(2, 6)}`;
}
