import { isRedgreenError } from '../errors.js';
import type { Fixture } from '../fixtures/load.js';
import { applyToFixture, type ApplyOutcome } from '../patch/apply.js';
import { auditPatch, describeAudit } from '../patch/audit.js';
import { guardPatch } from '../patch/guard.js';
import { parsePatch, touchedPaths, type ParsedPatch } from '../patch/parse.js';
import { protectedMatcher } from '../patch/protect.js';
import { syncPatch } from '../patch/sync.js';
import { adapterFor } from '../results/index.js';
import { sha256 } from '../sandbox/core/sha256.js';
import type { ReadTree } from '../sandbox/core/tree.js';
import type { FixtureContext } from './context.js';
import type { FixtureEvent } from './events.js';
import type { PatchSummary } from './result.js';

/** A patch as a source gives it: its text, or why there is none. */
export interface PatchInput {
  source: string;
  text: string | null;
  /** Why `text` is null (e.g. the oracle file does not exist), or what stopped the agent. */
  missing?: string;
  /** The agent hit its time limit (its patch, if any, is kept for the report). */
  timedOut?: boolean;
  /** The agent command failed (could not start, or exited non-zero) having changed nothing. */
  agentError?: string;
}

export interface InspectedPatch {
  summary: PatchSummary;
  parsed: ParsedPatch | null;
  text: string | null;
}

/** Files of a fixture folder that are the harness's, not the repository's. */
export const FIXTURE_META_FILES = ['fixture.json', 'ISSUE.md'];

/**
 * Parses, guards and audits a patch against the fixture's tree, before anything is written
 * anywhere. With `strict` (`run --strict`), a patch the audit flags is refused as unsafe.
 */
export async function inspectPatch(
  input: PatchInput,
  fixture: Fixture,
  options: { allowEmpty?: boolean; strict?: boolean } = {},
): Promise<InspectedPatch> {
  const base = { source: input.source, files: [], tampered: [], fuzzy: false };
  if (input.text === null) {
    return { summary: { ...base, sha256: null, status: 'missing', reason: input.missing ?? 'no patch' }, parsed: null, text: null };
  }
  const hash = sha256(input.text);
  // An agent that changed nothing is graded like any other patch: its tests simply stay RED.
  if (options.allowEmpty && !input.text.trim())
    return { summary: { ...base, sha256: hash, status: 'none', reason: 'empty patch' }, parsed: null, text: input.text };
  try {
    const parsed = parsePatch(input.text);
    await guardPatch(parsed, fixture.treeDir);
    const audit = auditPatch(input.text, parsed, protectedMatcher(protectedGlobs(fixture)));
    const summary: PatchSummary = {
      ...base,
      sha256: hash,
      status: 'none',
      files: touchedPaths(parsed),
      ...(audit.length ? { audit } : {}),
    };
    if (options.strict && audit.length) {
      const reason = `it reaches into test-framework internals (refused by --strict): ${describeAudit(audit)}`;
      return { summary: { ...summary, status: 'unsafe', reason }, parsed: null, text: input.text };
    }
    return { summary, parsed, text: input.text };
  } catch (e) {
    if (!isRedgreenError(e)) throw e;
    const status = e.code === 'PATCH_UNSAFE' ? 'unsafe' : e.code === 'PATCH_EMPTY' ? 'empty' : 'not_a_diff';
    return { summary: { ...base, sha256: hash, status, reason: e.message }, parsed: null, text: input.text };
  }
}

/** Protected globs: the manifest's plus the runner's own test infrastructure. */
export function protectedGlobs(fixture: Fixture): string[] {
  return [...fixture.manifest.protected, ...(adapterFor(fixture.manifest.runner).infrastructure ?? [])];
}

/** The transcript's record of a patch as it was given (what became of it follows as file and error events). */
export function patchEvent(summary: PatchSummary, text: string | null): FixtureEvent {
  return {
    type: 'patch',
    source: summary.source,
    sha256: summary.sha256,
    text,
    status: summary.status,
    ...(summary.reason ? { reason: summary.reason } : {}),
    files: summary.files,
    tampered: [],
  };
}

/**
 * The inspected patch applied to the fixture's files on the host (no sandbox needed): what it
 * would leave, or why it does not apply. Null when there is nothing to apply.
 */
export function preparePatch(
  patch: InspectedPatch,
  fixture: Fixture,
  options: { fuzzy?: boolean; tree?: ReadTree | null } = {},
): Promise<ApplyOutcome> | null {
  if (!patch.parsed || patch.text === null) return null;
  const { tree, ...rest } = options;
  return applyToFixture(fixture.treeDir, fixture.treeSkip, patch.text, patch.parsed, {
    ...rest,
    ...(tree ? { contents: tree.contents } : {}),
  });
}

/** Writes a prepared patch's files into the sandbox (protected ones excepted) and records them. */
export async function applyPatch(
  ctx: FixtureContext,
  patch: InspectedPatch,
  prepared: Promise<ApplyOutcome> | null,
): Promise<PatchSummary> {
  const { summary } = patch;
  ctx.emit(patchEvent(summary, patch.text));
  if (summary.status === 'none' && summary.reason === 'empty patch') return { ...summary, status: 'applied' };
  if (!prepared) return summary;
  const outcome = await prepared;
  if (outcome.status !== 'applied' || !outcome.files) {
    const failed = { ...summary, status: outcome.status, ...(outcome.reason ? { reason: outcome.reason } : {}) };
    ctx.emit({ type: 'error', phase: 'patch', code: 'PATCH_DOES_NOT_APPLY', message: failed.reason ?? outcome.status });
    return failed;
  }
  const synced = await syncPatch(ctx.sandbox, outcome.files, protectedMatcher(protectedGlobs(ctx.fixture)));
  for (const p of synced.removed) ctx.emit({ type: 'file', phase: 'patch', path: p, bytes: 0, sha256: '', action: 'remove' });
  for (const w of synced.written) ctx.emit({ type: 'file', phase: 'patch', ...w, action: 'write' });
  return {
    ...summary,
    status: 'applied',
    tampered: synced.tampered,
    fuzzy: Boolean(outcome.fuzzy),
    ...(outcome.reason ? { reason: outcome.reason } : {}),
  };
}
