import { randomBytes } from 'node:crypto';
import { existsSync, rmSync } from 'node:fs';
import { mkdir, readdir, readFile, rename, rm, stat, utimes, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import type { Sandbox } from '../sandbox/core/types.js';
import { diskUsage, runTool } from '../sandbox/core/tool.js';
import { inUse, markUse } from '../sandbox/core/users.js';
import { evictLru, pruneLru, type PruneHow } from '../sandbox/core/lru.js';
import { sha256 } from '../sandbox/core/sha256.js';

const LayerMetaSchema = z.object({
  version: z.literal(1),
  key: z.string(),
  fixture: z.string(),
  /** The backends that may mount it (those that share the setup cache entry it holds). */
  backends: z.array(z.string()),
  /** Set when a file in it names the workspace's path: usable only where the workspace is at that path. */
  workdir: z.string().nullable(),
  bytes: z.number(),
  createdAt: z.string(),
});
export type LayerMeta = z.infer<typeof LayerMetaSchema>;

export interface LayerListing {
  name: string;
  dir: string;
  bytes: number;
  lastUsed: Date;
  meta: LayerMeta | null;
  inUse: boolean;
}

/**
 * Prepared workspaces: a fixture's workspace as it stands after upload and (cached) setup, kept
 * once as a folder that sandboxes able to mount it copy-on-write start from, so a sandbox over
 * 30,000 files is ready without copying or unpacking anything. `<key>/tree` is the workspace,
 * `<key>/layer.json` describes it (its mtime is its last use), and `<key>/users/` names the
 * sandboxes mounted over it: a layer in use is never evicted (removing a lower layer under a
 * mounted overlay would pull files from under a running sandbox). A layer is made in a temp folder
 * and renamed into place, so it appears whole; one made meanwhile by another run is kept.
 */
export class WorkspaceLayers {
  constructor(
    readonly dir: string,
    readonly maxBytes: number,
  ) {}

  /** Names this cache on a container engine, whose layers (sandbox/docker/layers.ts) belong to one cache each. */
  get scope(): string {
    return sha256(path.resolve(this.dir)).slice(0, 16);
  }

  static key(fixtureSha256: string, setupKey: string | null, backends: readonly string[]): string {
    return sha256(JSON.stringify({ fixtureSha256, setupKey, backends })).slice(0, 32);
  }

  /** Mounts a ready layer as the sandbox's (empty) workspace; `release` ends the sandbox's use of it. */
  async start(key: string, sb: Sandbox): Promise<{ meta: LayerMeta; release: () => void } | null> {
    const layer = path.join(this.dir, key);
    // Most fixtures have no layer: asking costs less than a failed read.
    if (!sb.startFrom || !existsSync(layer)) return null;
    const meta = await readMeta(layer);
    if (!meta || meta.key !== key || !meta.backends.includes(sb.backend) || (meta.workdir !== null && meta.workdir !== sb.workdir))
      return null;
    // Named as a user before the mount, so an eviction racing with it sees the use.
    let user: string;
    try {
      user = markUse(path.join(layer, 'users'), sb.id);
    } catch {
      return null; // evicted meanwhile
    }
    const release = () => rmSync(user, { force: true });
    if (!(await sb.startFrom(path.join(layer, 'tree')))) {
      release();
      return null;
    }
    const now = new Date();
    await utimes(path.join(layer, 'layer.json'), now, now).catch(() => undefined);
    return { meta, release };
  }

  /** Keeps the sandbox's workspace as the layer `key`; returns why it did not, or null. */
  async save(key: string, sb: Sandbox, info: { fixture: string; backends: readonly string[] }): Promise<string | null> {
    if (!sb.saveWorkspace) return `the ${sb.backend} backend cannot save a workspace`;
    if (await readMeta(path.join(this.dir, key))) return null;
    const tmp = path.join(this.dir, `.tmp-${randomBytes(6).toString('hex')}`);
    try {
      await mkdir(tmp, { recursive: true });
      if (!(await sb.saveWorkspace(path.join(tmp, 'tree')))) return 'the workspace could not be copied';
      const bytes = await diskUsage(path.join(tmp, 'tree'));
      if (bytes > this.maxBytes) return `it is larger than the cache's cap (${this.maxBytes} bytes)`;
      const meta: LayerMeta = {
        version: 1,
        key,
        fixture: info.fixture,
        backends: [...info.backends],
        workdir: (await mentions(path.join(tmp, 'tree'), sb.workdir)) ? sb.workdir : null,
        bytes,
        createdAt: new Date().toISOString(),
      };
      await writeFile(path.join(tmp, 'layer.json'), JSON.stringify(meta));
      await rename(tmp, path.join(this.dir, key)).catch(() => undefined); // made meanwhile: that one stays
      await this.evict(this.maxBytes, key);
      return null;
    } finally {
      await rm(tmp, { recursive: true, force: true });
    }
  }

  /** Every layer, least recently used first. */
  async list(): Promise<LayerListing[]> {
    const names = (await readdir(this.dir).catch(() => [] as string[])).filter((n) => !n.startsWith('.'));
    const out: LayerListing[] = [];
    for (const name of names) {
      const dir = path.join(this.dir, name);
      const st = await stat(path.join(dir, 'layer.json')).catch(() => null);
      if (!st) continue;
      const meta = await readMeta(dir);
      out.push({ name, dir, bytes: meta?.bytes ?? 0, lastUsed: st.mtime, meta, inUse: await inUse(path.join(dir, 'users')) });
    }
    return out.sort((a, b) => a.lastUsed.getTime() - b.lastUsed.getTime() || a.name.localeCompare(b.name));
  }

  /** Removes the least recently used layers no sandbox uses until the rest fit in `maxBytes` (`keep` stays). */
  async evict(maxBytes: number, keep?: string): Promise<LayerListing[]> {
    return evictLru(await this.list(), maxBytes, keep, (l) => this.remove(l));
  }

  /** `cache prune`: every unused layer, down to a size, or those unused for some days. */
  async prune(how: PruneHow): Promise<LayerListing[]> {
    return pruneLru(await this.list(), how, (l) => this.remove(l));
  }

  /** Renamed aside first, so no sandbox can start from it while it is being removed. */
  private async remove(l: LayerListing): Promise<void> {
    const aside = path.join(this.dir, `.gone-${randomBytes(6).toString('hex')}`);
    await rename(l.dir, aside);
    await rm(aside, { recursive: true, force: true });
  }
}

async function readMeta(layer: string): Promise<LayerMeta | null> {
  try {
    const r = LayerMetaSchema.safeParse(JSON.parse(await readFile(path.join(layer, 'layer.json'), 'utf8')));
    return r.success ? r.data : null;
  } catch {
    return null;
  }
}

/** Whether any file of the tree holds `text` (a venv's scripts name the workspace's path). */
async function mentions(dir: string, text: string): Promise<boolean> {
  return (await runTool('grep', ['-rqF', '--', text, dir])).code === 0;
}
