import { mkdir } from 'node:fs/promises';
import { WorkspaceLayers } from './workspace-layers.js';
import { SetupCache } from './setup-cache.js';
import type { FixtureContext } from './context.js';
import type { Fixture } from '../fixtures/load.js';
import type { UploadStats } from '../sandbox/core/types.js';

/** Below these, a plain upload is as fast as a mount: a fixture without setup gets no layer. */
const LAYER_MIN_FILES = 1000;
const LAYER_MIN_BYTES = 32 * 1024 * 1024;

export interface LayerPlan {
  key: string;
  /** The setup cache entry the layer holds the result of (null: the fixture has no setup). */
  setupKey: string | null;
  backends: string[];
}

/**
 * Whether this sandbox can start from a prepared layer (a backend that mounts copy-on-write, with
 * the setup cache on), and which one (layerFor).
 */
export async function layerPlan(ctx: FixtureContext, fixtureSha256: string): Promise<LayerPlan | null> {
  const { setupCache: cache, sandbox: sb, fixture } = ctx;
  if (!cache?.layers || !((sb.startFrom && sb.saveWorkspace) || (sb.startLayer && sb.saveLayer))) return null;
  return layerFor(fixture, fixtureSha256, sb.backend);
}

/** The layer a sandbox of `backend` would start from: the fixture's content, its setup's cache key, the backends that share it. */
export async function layerFor(fixture: Fixture, fixtureSha256: string, backend: string): Promise<LayerPlan> {
  const setupKey = fixture.manifest.setup?.commands.length ? await SetupCache.key(fixture, backend) : null;
  const backends = SetupCache.sharedWith(fixture, backend);
  return { key: WorkspaceLayers.key(fixtureSha256, setupKey, backends), setupKey, backends };
}

/**
 * Starts the workspace from the plan's layer, instead of an upload and setup. A layer stands for
 * a cached setup, so it is used only while the setup cache would be: its entry still usable here.
 */
export async function startFromLayer(
  ctx: FixtureContext,
  plan: LayerPlan,
): Promise<{ bytes: number; ahead?: boolean; release: () => void } | null> {
  const cache = ctx.setupCache!;
  const sb = ctx.sandbox;
  if (plan.setupKey && !(await cache.lookup(plan.setupKey, ctx.fixture, sb))) return null;
  if (sb.startLayer) {
    const started = await sb.startLayer(plan.key, { cacheDir: cache.layers!.dir });
    return started && { ...started, release: () => undefined };
  }
  const started = await cache.layers!.start(plan.key, sb);
  return started && { bytes: started.meta.bytes, release: started.release };
}

/**
 * After an upload and setup: keeps the workspace as the plan's layer when it pays — setup's result
 * went into the cache (what setup does outside the workspace is not, and such a setup is never
 * skipped), or the upload alone was big. A layer that cannot be kept is only a note in the transcript.
 */
export async function saveLayer(ctx: FixtureContext, plan: LayerPlan, upload: UploadStats): Promise<void> {
  const cache = ctx.setupCache!;
  const worth = plan.setupKey
    ? (await cache.lookup(plan.setupKey, ctx.fixture, ctx.sandbox)) !== null
    : upload.files >= LAYER_MIN_FILES || upload.bytes >= LAYER_MIN_BYTES;
  if (!worth) return;
  // An engine's layer names the cache's folder as its owner (gc removes it once that is gone): it must exist.
  if (ctx.sandbox.saveLayer) await mkdir(cache.layers!.dir, { recursive: true });
  const why = ctx.sandbox.saveLayer
    ? await ctx.sandbox.saveLayer(plan.key, {
        fixture: ctx.fixture.id,
        maxBytes: cache.layers!.maxBytes,
        scope: cache.layers!.scope,
        cacheDir: cache.layers!.dir,
      })
    : await cache.layers!.save(plan.key, ctx.sandbox, { fixture: ctx.fixture.id, backends: plan.backends });
  if (why) ctx.emit({ type: 'error', phase: 'setup', code: 'SETUP_CACHE', message: `prepared workspace not kept: ${why}` });
  else ctx.emit({ type: 'cache', key: plan.key, hit: false, bytes: 0, paths: [], layer: true });
}
