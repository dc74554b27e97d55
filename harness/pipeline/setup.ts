import { mkdtemp, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describeError, isRedgreenError, RedgreenError, tailOf } from '../errors.js';
import { missingCommand } from '../results/missing-tool.js';
import { runCommand, type FixtureContext } from './context.js';
import { archiveEntries, restoreEntries } from './setup-archive.js';
import { SetupCache } from './setup-cache.js';
import { diffListings, listWorkspace, type Listing } from './setup-changes.js';

/** What a download says when there is no network (npm, pip, curl, apt, git, go, cargo). */
const NO_NETWORK =
  /EAI_AGAIN|ENOTFOUND|ENETUNREACH|getaddrinfo|Temporary failure in name resolution|Name or service not known|Could not resolve host|Couldn't resolve host|no such host|Network is unreachable|Failed to establish a new connection/;

export interface SetupFailure {
  reason: string;
  timedOut: boolean;
  /** SETUP_NETWORK: setup had the network (setup.network) and could not reach it, the machine's problem, not the fixture's. */
  code: 'SETUP_FAILED' | 'SETUP_NETWORK';
}

/**
 * Runs the manifest's setup commands within one time budget — or, when the setup cache has this
 * fixture's result, puts it back instead. Returns why setup failed, if it did.
 */
export async function runSetup(ctx: FixtureContext): Promise<SetupFailure | null> {
  const setup = ctx.fixture.manifest.setup;
  if (!setup?.commands.length) return null;
  const cache = ctx.setupCache;
  const key = cache ? await SetupCache.key(ctx.fixture, ctx.sandbox.backend) : '';
  const before = cache ? await restoreOrList(ctx, cache, key) : null;
  if (before === 'restored') return null;
  const deadline = performance.now() + setup.timeoutSec * 1000;
  for (const [i, command] of setup.commands.entries()) {
    const left = Math.max(1, Math.round(deadline - performance.now()));
    const r = await runCommand(ctx, 'setup', `setup #${i + 1}`, command, { timeoutMs: left, network: setup.network });
    if (r.aborted) throw new RedgreenError('INTERRUPTED', 'interrupted');
    if (r.timedOut) return { reason: `setup timed out after ${setup.timeoutSec}s: ${command}`, timedOut: true, code: 'SETUP_FAILED' };
    if (r.exitCode !== 0) {
      const tail = tailOf(r.stderr || r.stdout);
      const noNetwork = NO_NETWORK.test(`${r.stderr}\n${r.stdout}`);
      if (noNetwork && setup.network) {
        const reason = `setup could not reach the network: ${command}${tail ? ` — ${tail}` : ''} (this machine's network, not the fixture: run where setup can download, or give the setup with \`--setup\`/\`--no-setup\` when making fixtures)`;
        return { reason, timedOut: false, code: 'SETUP_NETWORK' };
      }
      const missing = missingCommand(r.stderr, r.exitCode);
      const hint = noNetwork
        ? ' (setup has no network: set "network": true under setup in fixture.json if it must download)'
        : missing
          ? ` (${missing.name} is not installed where setup runs: \`redgreen doctor\` lists what the fixtures here need and how to get it)`
          : '';
      return {
        reason: `setup command failed (exit ${r.exitCode}): ${command}${tail ? ` — ${tail}` : ''}${hint}`,
        timedOut: false,
        code: 'SETUP_FAILED',
      };
    }
  }
  if (cache && before) await storeSetup(ctx, cache, key, before);
  return null;
}

const cacheError = (ctx: FixtureContext, message: string) => ctx.emit({ type: 'error', phase: 'setup', code: 'SETUP_CACHE', message });

/**
 * A hit is put back into the workspace ('restored'); on a miss, the workspace is listed so that
 * what setup changes can be told apart afterwards (null: it cannot be, and nothing is cached).
 */
async function restoreOrList(ctx: FixtureContext, cache: SetupCache, key: string): Promise<'restored' | Listing | null> {
  const sb = ctx.sandbox;
  const hit = await cache.lookup(key, ctx.fixture, sb);
  if (hit) {
    const { meta, archive } = hit.entry;
    try {
      await restoreEntries(sb, archive, meta.removed);
      ctx.emit({ type: 'cache', key, hit: true, bytes: archive.bytes, paths: meta.roots });
      return 'restored';
    } catch (e) {
      // A refused entry was checked before anything was written: drop it and run setup. One that
      // failed half-way leaves a workspace that must not be tested: the fixture is retried without it.
      await cache.remove({ file: hit.file });
      if (!isRedgreenError(e, 'SANDBOX_PATH_UNSAFE')) throw e;
      cacheError(ctx, `cached setup refused and removed: ${describeError(e)}`);
    }
  }
  try {
    return await listWorkspace(sb);
  } catch (e) {
    cacheError(ctx, `setup cache not used: ${describeError(e)}`);
    return null;
  }
}

/**
 * Caches every change setup made to the workspace; a cache that cannot be written is only a miss.
 * The tar goes from the sandbox to a host temp file and into the entry by streaming.
 */
async function storeSetup(ctx: FixtureContext, cache: SetupCache, key: string, before: Listing): Promise<void> {
  const tmp = await mkdtemp(path.join(os.tmpdir(), 'redgreen-setup-'));
  try {
    const changes = diffListings(before, await listWorkspace(ctx.sandbox));
    // Nothing changed in the workspace: whatever setup did happened elsewhere, and skipping it would lose it.
    if (!changes.write.length && !changes.removed.length) return;
    const archiveFile = changes.write.length ? path.join(tmp, 'setup.tar') : null;
    if (archiveFile) await archiveEntries(ctx.sandbox, changes.write, archiveFile);
    const why = await cache.store({
      key,
      fixture: ctx.fixture,
      sandbox: ctx.sandbox,
      roots: changes.roots,
      removed: changes.removed,
      archiveFile,
    });
    if (why) cacheError(ctx, `setup cache not written: ${why}`);
    else ctx.emit({ type: 'cache', key, hit: false, bytes: archiveFile ? (await stat(archiveFile)).size : 0, paths: changes.roots });
  } catch (e) {
    cacheError(ctx, `setup cache not written: ${describeError(e)}`);
  } finally {
    await rm(tmp, { recursive: true, force: true });
  }
}
