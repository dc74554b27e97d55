import { createHash } from 'node:crypto';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Fixture } from '../fixtures/load.js';

/** Files that decide what a setup installs (seed 002: hash the lockfiles, not the whole tree). */
export const LOCKFILES = [
  'package.json',
  'package-lock.json',
  'npm-shrinkwrap.json',
  'yarn.lock',
  'pnpm-lock.yaml',
  'requirements.txt',
  'requirements-dev.txt',
  'pyproject.toml',
  'poetry.lock',
  'Pipfile.lock',
  'setup.py',
  'setup.cfg',
  'go.mod',
  'go.sum',
  'Cargo.toml',
  'Cargo.lock',
  'Gemfile.lock',
];

/**
 * The result of a fixture's setup (what it added to the workspace, e.g. node_modules), kept as a
 * tar keyed by the backend, the image, the setup commands and the lockfiles, so a second run
 * skips the install. Entries are written atomically; concurrent writers of one key are harmless.
 */
export class SetupCache {
  constructor(readonly dir: string) {}

  static async key(fixture: Fixture, backend: string): Promise<string> {
    const h = createHash('sha256');
    h.update(JSON.stringify({ backend, image: fixture.manifest.image ?? null, setup: fixture.manifest.setup, env: fixture.manifest.env }));
    for (const name of LOCKFILES) {
      const content = await readFile(path.join(fixture.dir, name)).catch(() => null);
      if (content) h.update(`\0${name}\0`).update(content);
    }
    return `${fixture.id}-${h.digest('hex').slice(0, 24)}`;
  }

  get(key: string): Promise<Buffer | null> {
    return readFile(path.join(this.dir, `${key}.tar`)).catch(() => null);
  }

  async put(key: string, tar: Buffer): Promise<void> {
    await mkdir(this.dir, { recursive: true });
    const file = path.join(this.dir, `${key}.tar`);
    const tmp = `${file}.${process.pid}.${Date.now()}.tmp`;
    await writeFile(tmp, tar);
    await rename(tmp, file);
  }
}
