import { readdir } from 'node:fs/promises';
import { describeError, RedgreenError } from '../errors.js';
import { DEFAULT_EXCLUDES } from '../sandbox/tree.js';
import { runCommand, type FixtureContext } from './context.js';
import { FIXTURE_META_FILES } from './patch-phase.js';
import { SetupCache } from './setup-cache.js';

export interface SetupFailure {
  reason: string;
  timedOut: boolean;
}

/**
 * Runs the manifest's setup commands within one time budget — or, when the setup cache has this
 * fixture's result, unpacks it instead. Returns why setup failed, if it did.
 */
export async function runSetup(ctx: FixtureContext): Promise<SetupFailure | null> {
  const setup = ctx.fixture.manifest.setup;
  if (!setup?.commands.length) return null;
  const { sandbox: sb, setupCache: cache } = ctx;
  const cacheable = cache && sb.archive && sb.extract;
  const key = cacheable ? await SetupCache.key(ctx.fixture, sb.backend) : '';
  if (cacheable) {
    const hit = await cache.get(key);
    if (hit) {
      await sb.extract!(hit);
      ctx.emit({ type: 'cache', key, hit: true, bytes: hit.length, paths: [] });
      return null;
    }
  }
  const deadline = performance.now() + setup.timeoutSec * 1000;
  for (const [i, command] of setup.commands.entries()) {
    const left = Math.max(1, Math.round(deadline - performance.now()));
    const r = await runCommand(ctx, 'setup', `setup #${i + 1}`, command, { timeoutMs: left, network: setup.network });
    if (r.aborted) throw new RedgreenError('INTERRUPTED', 'interrupted');
    if (r.timedOut) return { reason: `setup timed out after ${setup.timeoutSec}s: ${command}`, timedOut: true };
    if (r.exitCode !== 0) {
      const tail = (r.stderr || r.stdout).trim().split('\n').slice(-3).join(' | ');
      return { reason: `setup command failed (exit ${r.exitCode}): ${command}${tail ? ` — ${tail}` : ''}`, timedOut: false };
    }
  }
  if (cacheable) await storeSetup(ctx, cache, key);
  return null;
}

/** Caches what setup added at the top of the workspace; a cache that cannot be written is only a miss. */
async function storeSetup(ctx: FixtureContext, cache: SetupCache, key: string): Promise<void> {
  try {
    // What was uploaded (the fixture minus what uploads skip) is not setup's work.
    const uploaded = new Set((await readdir(ctx.fixture.dir)).filter((n) => !DEFAULT_EXCLUDES.includes(n) && !FIXTURE_META_FILES.includes(n)));
    const listing = await ctx.sandbox.exec(['ls', '-A1'], { timeoutMs: 30_000 });
    const added = listing.stdout.split('\n').filter((n) => n && !uploaded.has(n));
    if (!added.length) return;
    const tar = await ctx.sandbox.archive!(added);
    await cache.put(key, tar);
    ctx.emit({ type: 'cache', key, hit: false, bytes: tar.length, paths: added });
  } catch (e) {
    ctx.emit({ type: 'error', phase: 'setup', code: 'SETUP_CACHE', message: `setup cache not written: ${describeError(e)}` });
  }
}
