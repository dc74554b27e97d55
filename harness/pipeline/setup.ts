import { readdir } from 'node:fs/promises';
import { describeError, RedgreenError, tailOf } from '../errors.js';
import { DEFAULT_EXCLUDES } from '../sandbox/core/tree.js';
import type { Sandbox } from '../sandbox/core/types.js';
import { runCommand, type FixtureContext } from './context.js';
import { FIXTURE_META_FILES } from './patch-phase.js';
import { SetupCache } from './setup-cache.js';

/** What a download says when there is no network (npm, pip, curl, apt, git). */
const NO_NETWORK =
  /EAI_AGAIN|ENOTFOUND|ENETUNREACH|getaddrinfo|Temporary failure in name resolution|Could not resolve host|Network is unreachable|Failed to establish a new connection/;

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
  const key = cache ? await SetupCache.key(ctx.fixture, sb.backend) : '';
  if (cache) {
    const hit = await cache.get(key);
    if (hit) {
      await extractInto(sb, hit);
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
      const tail = tailOf(r.stderr || r.stdout);
      const offline = !setup.network && NO_NETWORK.test(`${r.stderr}\n${r.stdout}`);
      const hint = offline ? ' (setup has no network: set "network": true under setup in fixture.json if it must download)' : '';
      return { reason: `setup command failed (exit ${r.exitCode}): ${command}${tail ? ` — ${tail}` : ''}${hint}`, timedOut: false };
    }
  }
  if (cache) await storeSetup(ctx, cache, key);
  return null;
}

/** Caches what setup added at the top of the workspace; a cache that cannot be written is only a miss. */
async function storeSetup(ctx: FixtureContext, cache: SetupCache, key: string): Promise<void> {
  try {
    // What was uploaded (the fixture minus what uploads skip) is not setup's work.
    const uploaded = new Set(
      (await readdir(ctx.fixture.dir)).filter((n) => !DEFAULT_EXCLUDES.includes(n) && !FIXTURE_META_FILES.includes(n)),
    );
    const listing = await ctx.sandbox.exec(['ls', '-A1'], { timeoutMs: 30_000 });
    const added = listing.stdout.split('\n').filter((n) => n && !uploaded.has(n));
    if (!added.length) return;
    const tar = await archiveOf(ctx.sandbox, added);
    await cache.put(key, tar);
    ctx.emit({ type: 'cache', key, hit: false, bytes: tar.length, paths: added });
  } catch (e) {
    ctx.emit({ type: 'error', phase: 'setup', code: 'SETUP_CACHE', message: `setup cache not written: ${describeError(e)}` });
  }
}

const CACHE_TAR = 'setup-cache.tar';

/** A backend's own archive, or `tar` run inside the sandbox (every image redgreen targets has it). */
async function archiveOf(sb: Sandbox, paths: string[]): Promise<Buffer> {
  if (sb.archive) return sb.archive(paths);
  const file = `${sb.scratchDir}/${CACHE_TAR}`;
  const r = await sb.exec(['tar', '-cf', file, '--', ...paths], { timeoutMs: 300_000 });
  if (r.exitCode !== 0) throw new RedgreenError('SANDBOX_FAILED', `tar failed: ${r.stderr.trim().split('\n').at(-1) ?? ''}`);
  try {
    return await sb.readFile(file);
  } finally {
    await sb.removeFiles([file]);
  }
}

async function extractInto(sb: Sandbox, tar: Buffer): Promise<void> {
  if (sb.extract) return sb.extract(tar);
  const file = `${sb.scratchDir}/${CACHE_TAR}`;
  await sb.writeFiles([{ path: file, content: tar }]);
  const r = await sb.exec(['tar', '-xf', file], { timeoutMs: 300_000 });
  await sb.removeFiles([file]);
  if (r.exitCode !== 0)
    throw new RedgreenError('SANDBOX_FAILED', `could not unpack the cached setup: ${r.stderr.trim().split('\n').at(-1) ?? ''}`);
}
