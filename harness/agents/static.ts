import { readFileSync } from 'node:fs';
import type { PatchInput } from '../pipeline/patch-phase.js';
import type { PatchProvider } from '../pipeline/provider.js';
import { shownPath } from '../config/paths.js';

/**
 * The fixture's own reference fix: the bytes its fingerprint hashed, or read at once (a patch file
 * is small). A missing file is a patch error, not a crash.
 */
export const oracleProvider: PatchProvider = {
  kind: 'static',
  subject: 'oracle',
  async patchFor(fixture, ctx): Promise<PatchInput> {
    const source = `oracle:${shownPath(fixture.oraclePath)}`;
    const missing = { source, text: null, missing: `no oracle patch at ${shownPath(fixture.oraclePath)}` };
    if (ctx.oracle !== undefined) return ctx.oracle ? { source, text: ctx.oracle.toString('utf8') } : missing;
    try {
      return { source, text: readFileSync(fixture.oraclePath, 'utf8') };
    } catch {
      return missing;
    }
  },
};

/** The do-nothing baseline: an empty patch, so every valid fixture stays RED. */
export const nopProvider: PatchProvider = {
  kind: 'static',
  subject: 'nop',
  gradesEmpty: true,
  async patchFor(): Promise<PatchInput> {
    return { source: 'nop', text: '' };
  },
};

/** Patches given in memory, by fixture id (a predictions file, a patch folder). */
export function mapProvider(subject: string, patches: ReadonlyMap<string, { source: string; text: string }>): PatchProvider {
  return {
    kind: 'static',
    subject,
    covers: new Set(patches.keys()),
    async patchFor(fixture): Promise<PatchInput> {
      const p = patches.get(fixture.id);
      return p ? { source: p.source, text: p.text } : { source: subject, text: null, missing: `${subject} has no patch for ${fixture.id}` };
    },
  };
}
