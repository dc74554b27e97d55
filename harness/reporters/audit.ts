import type { FixtureResult } from '../pipeline/result.js';
import { auditLines } from '../scoring/suspicion.js';

export interface Audited {
  fixtureId: string;
  verdict: FixtureResult['verdict'];
  /** `file:line [rule] text` per flagged line of the patch. */
  lines: string[];
}

/** Fixtures whose patch reaches into test-framework internals, with the lines: every report lists them. */
export function auditedFixtures(fixtures: readonly FixtureResult[]): Audited[] {
  return fixtures.flatMap((f) => {
    const lines = auditLines(f.patch);
    return lines.length ? [{ fixtureId: f.fixtureId, verdict: f.verdict, lines }] : [];
  });
}
