import { cp, mkdir, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll } from 'vitest';
import { resolvePaths, type ProjectPaths } from '../../harness/config/paths.js';
import { REPO } from './cli.js';

/**
 * The bundled fixtures the tests know by name. Tests use a copy of these in a temp folder, never
 * the repository's `fixtures/` itself, so a fixture a user adds there (`redgreen new`) or changes
 * cannot change what the suite sees.
 */
export const SEEDS = [
  'bug01_decimal_div',
  'bug02_off_by_one',
  'bug03_strip_lines',
  'bug04_state_mutation',
  'bug05_unicode_normalize',
] as const;
export const BUNDLED = [...SEEDS, 'js_cart_total', 'py_inventory_unittest', 'ts_duration_parse'] as const;

/** Copies bundled fixtures (and their oracles) into `root`, laid out as a user's project. */
export async function copyBundled(root: string, ids: readonly string[] = BUNDLED): Promise<string> {
  await mkdir(path.join(root, 'oracles'), { recursive: true });
  for (const id of ids) {
    // A stray node_modules from a selfcheck run in the repository is not part of the fixture.
    await cp(path.join(REPO, 'fixtures', id), path.join(root, 'fixtures', id), {
      recursive: true,
      filter: (src) => !src.includes(`${path.sep}node_modules`),
    });
    await cp(path.join(REPO, 'oracles', `${id}.patch`), path.join(root, 'oracles', `${id}.patch`));
  }
  return root;
}

/** A fresh temp project holding a copy of the bundled fixtures. */
export async function bundledProject(prefix = 'rg-bundled-', ids: readonly string[] = BUNDLED): Promise<string> {
  return copyBundled(await mkdtemp(path.join(os.tmpdir(), prefix)), ids);
}

/**
 * For a test file: a copy of the bundled fixtures made on first use and removed after the file's
 * tests; returns its project paths, as `discoverFixtures` takes them.
 */
export function useBundledCopy(ids: readonly string[] = BUNDLED): () => Promise<ProjectPaths> {
  let root: Promise<string> | undefined;
  afterAll(async () => {
    if (root) await rm(await root, { recursive: true, force: true });
  });
  return async () => resolvePaths({ root: await (root ??= bundledProject('rg-bundled-', ids)) });
}
