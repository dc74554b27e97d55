import type { FixtureResult } from '../pipeline/result.js';
import { EXPECTED } from '../scoring/verdicts.js';

/**
 * 0 everything as expected; 1 a fixture did not meet its expectation; 2 configuration error
 * (an invalid fixture); 3 harness or infrastructure error; 130 interrupted. The most serious wins.
 */
export function exitCodeFor(results: readonly FixtureResult[], interrupted: boolean): number {
  if (interrupted) return 130;
  if (results.some((r) => r.verdict === 'infra_error')) return 3;
  if (results.some((r) => r.verdict === 'invalid_fixture')) return 2;
  if (results.some((r) => !EXPECTED.has(r.verdict))) return 1;
  return 0;
}
