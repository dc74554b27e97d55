import { createHash } from 'node:crypto';
import { createReadStream, existsSync, readFileSync } from 'node:fs';
import { mkdir, readdir, stat, unlink } from 'node:fs/promises';
import path from 'node:path';
import { cacheMaxBytes, CACHE_MAX_ENV } from '../config/cache.js';
import type { Fixture } from '../fixtures/load.js';
import type { Sandbox } from '../sandbox/core/types.js';
import {
  EMPTY_TAR,
  ENTRY_SUFFIX,
  guardHolds,
  guardOf,
  readEntry,
  readEntryMeta,
  touch,
  writeEntry,
  type Entry,
  type EntryMeta,
} from './setup-cache-entry.js';
import { WorkspaceLayers } from './workspace-layers.js';
import { evictLru, pruneLru, type PruneHow } from '../sandbox/core/lru.js';

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
 * local and bwrap run setup with the same host tools (bwrap binds the host's /usr and the runtimes
 * on PATH read-only), so the same setup writes the same files: they share entries. Only when setup
 * has the network, though: without it bwrap cannot download while local can, and an entry local
 * made would hand bwrap a result its own setup could not have produced. What still differs, the
 * workspace's path, is checked per entry (EntryMeta.workdir).
 */
const SHARED_WITH_NETWORK = ['local', 'bwrap'];

/** What `cache list` shows of an entry; `meta` is null for a file that is not a readable entry. */
export interface CacheListing {
  name: string;
  file: string;
  bytes: number;
  lastUsed: Date;
  meta: EntryMeta | null;
}

export interface StoreInput {
  key: string;
  fixture: Fixture;
  sandbox: Sandbox;
  roots: string[];
  removed: string[];
  /** A host file holding the tar of what setup wrote; null when it only removed. */
  archiveFile: string | null;
}

/** Whether a file holds `text`, read in chunks (a match across two chunks is found too). */
async function fileIncludes(file: string, text: string): Promise<boolean> {
  const needle = Buffer.from(text);
  let carry = Buffer.alloc(0);
  for await (const chunk of createReadStream(file)) {
    const window = Buffer.concat([carry, chunk as Buffer]);
    if (window.includes(needle)) return true;
    carry = window.subarray(Math.max(0, window.length - needle.length + 1));
  }
  return false;
}

/**
 * The result of a fixture's setup (every entry it wrote or removed in the workspace), keyed by the
 * backend, the image, the setup commands and the lockfiles, so a second run skips the install.
 * Capped in size: the least recently used entries go first (a hit touches its entry).
 */
export class SetupCache {
  readonly maxBytes: number;
  /** The same results as prepared workspaces, for sandboxes that start from one copy-on-write (null: off). */
  readonly layers: WorkspaceLayers | null;

  constructor(
    readonly dir: string,
    options: { maxBytes?: number; layers?: boolean } = {},
  ) {
    this.maxBytes = options.maxBytes ?? cacheMaxBytes();
    this.layers = options.layers === false ? null : new WorkspaceLayers(path.join(dir, 'layers'), this.maxBytes);
  }

  /** The setup cache under redgreen's cache folder (`$XDG_CACHE_HOME/redgreen`): the one runs and `redgreen cache` use. */
  static under(cacheDir: string, options: { maxBytes?: number } = {}): SetupCache {
    return new SetupCache(path.join(cacheDir, 'setup'), options);
  }

  /** The backends that may use an entry made on `backend` for this fixture. */
  static sharedWith(fixture: Fixture, backend: string): string[] {
    return fixture.manifest.setup?.network && SHARED_WITH_NETWORK.includes(backend) ? SHARED_WITH_NETWORK : [backend];
  }

  static async key(fixture: Fixture, backend: string): Promise<string> {
    const h = createHash('sha256');
    const backends = SetupCache.sharedWith(fixture, backend);
    h.update(JSON.stringify({ backends, image: fixture.manifest.image ?? null, setup: fixture.manifest.setup, env: fixture.manifest.env }));
    // Read in a row: a dozen names, most of them absent, asked for up to three times a fixture (its
    // layer, the lookahead, setup); a promise each cost more than the reads.
    for (const name of LOCKFILES) {
      const file = path.join(fixture.treeDir, name);
      if (!existsSync(file)) continue;
      let content: Buffer;
      try {
        content = readFileSync(file);
      } catch {
        continue; // a folder of that name, or unreadable: not a lockfile to key on
      }
      h.update(`\0${name}\0`).update(content);
    }
    return `${fixture.id}-${h.digest('hex').slice(0, 24)}`;
  }

  private file(name: string): string {
    return path.join(this.dir, `${name}${ENTRY_SUFFIX}`);
  }

  /** Entries bound to a workspace path are kept per backend; the others are shared. */
  private static boundName(key: string, backend: string): string {
    return `${key}@${backend}`;
  }

  /** A usable entry for this sandbox, touched as used; null on a miss. */
  async lookup(key: string, fixture: Fixture, sb: Sandbox): Promise<{ name: string; file: string; entry: Entry } | null> {
    for (const name of [key, SetupCache.boundName(key, sb.backend)]) {
      const usable = (m: EntryMeta | null) =>
        m && m.key === key && !m.unstable && m.backends.includes(sb.backend) && (m.workdir === null || m.workdir === sb.workdir);
      if (!usable(await readEntryMeta(this.file(name)))) continue;
      const entry = await readEntry(this.file(name));
      if (!entry || !usable(entry.meta) || !(await guardHolds(fixture.treeDir, entry.meta.guard))) continue;
      await touch(this.file(name)).catch(() => undefined);
      return { name, file: this.file(name), entry };
    }
    return null;
  }

  /** Stores a setup's result; returns why it was not kept, or null. */
  async store(input: StoreInput): Promise<string | null> {
    const { key, fixture, sandbox: sb, archiveFile } = input;
    const bytes = archiveFile ? (await stat(archiveFile)).size : EMPTY_TAR.length;
    if (bytes > this.maxBytes) return `it is larger than the cache's cap (${this.maxBytes} bytes; set ${CACHE_MAX_ENV})`;
    // A venv's scripts, an editable install or a build tree name the workspace's path: such a
    // copy works only where the workspace is at that same path.
    const bound = archiveFile !== null && (await fileIncludes(archiveFile, sb.workdir));
    const meta: EntryMeta = {
      version: 1,
      key,
      fixture: fixture.id,
      backend: sb.backend,
      backends: bound ? [sb.backend] : SetupCache.sharedWith(fixture, sb.backend),
      workdir: bound ? sb.workdir : null,
      unstable: false,
      createdAt: new Date().toISOString(),
      roots: input.roots,
      removed: input.removed,
      guard: await guardOf(fixture.treeDir, [...input.roots, ...input.removed]),
    };
    await mkdir(this.dir, { recursive: true });
    const boundFile = this.file(SetupCache.boundName(key, sb.backend));
    let name = key;
    if (bound) {
      const old = await readEntryMeta(boundFile);
      const why = `setup wrote the workspace's path (${sb.workdir}) into files, and on ${sb.backend} it differs from one sandbox to the next`;
      if (old?.unstable) return why;
      if (old && old.workdir !== sb.workdir) {
        // The path changed since the last entry: this backend's paths differ per sandbox, so none is kept.
        await writeEntry(boundFile, { ...meta, workdir: null, unstable: true, roots: [], removed: [], guard: {} }, null);
        return why;
      }
      name = SetupCache.boundName(key, sb.backend);
    } else if (!(await readEntryMeta(boundFile))?.unstable) await unlink(boundFile).catch(() => undefined);
    await writeEntry(this.file(name), meta, archiveFile);
    await this.evict(this.maxBytes, name);
    return null;
  }

  /** Every entry, least recently used first. */
  async list(): Promise<CacheListing[]> {
    const names = await readdir(this.dir).catch(() => [] as string[]);
    const out: CacheListing[] = [];
    for (const n of names.filter((n) => n.endsWith(ENTRY_SUFFIX))) {
      const file = path.join(this.dir, n);
      const st = await stat(file).catch(() => null);
      if (st?.isFile())
        out.push({ name: n.slice(0, -ENTRY_SUFFIX.length), file, bytes: st.size, lastUsed: st.mtime, meta: await readEntryMeta(file) });
    }
    return out.sort((a, b) => a.lastUsed.getTime() - b.lastUsed.getTime() || a.name.localeCompare(b.name));
  }

  /** Removes the least recently used entries until the rest fit in `maxBytes` (`keep` stays). */
  async evict(maxBytes: number, keep?: string): Promise<CacheListing[]> {
    return evictLru(await this.list(), maxBytes, keep, (e) => this.remove(e));
  }

  /** `cache prune`: everything, down to a size, or what was not used for some days. */
  async prune(how: PruneHow): Promise<CacheListing[]> {
    await this.removeLeftovers();
    return pruneLru(await this.list(), how, (e) => this.remove(e));
  }

  async remove(e: { file: string }): Promise<void> {
    await unlink(e.file).catch((err: NodeJS.ErrnoException) => (err.code === 'ENOENT' ? undefined : Promise.reject(err)));
  }

  /** Temp files of writers that died (a live writer's is minutes old at most) and entries of older versions (`*.tar`). */
  private async removeLeftovers(): Promise<void> {
    const dayAgo = Date.now() - 86_400_000;
    for (const n of await readdir(this.dir).catch(() => [] as string[])) {
      const file = path.join(this.dir, n);
      const st = await stat(file).catch(() => null);
      if (st?.isFile() && (n.endsWith('.tar') || (n.endsWith('.tmp') && st.mtimeMs < dayAgo))) await this.remove({ file });
    }
  }
}
