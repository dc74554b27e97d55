import { z } from 'zod';

/** One taxonomy for every reporter (design: Verdicts). */
export const SELFCHECK_VERDICTS = [
  'valid',
  'not_red',
  'not_green',
  'patch_error',
  'timeout',
  'flaky',
  'infra_error',
  'invalid_fixture',
] as const;
export const AGENT_VERDICTS = [
  'resolved',
  'unresolved',
  // The declared tests pass, but the patch reaches into test-framework internals or the run's
  // signals disagree: not counted as resolved until a person has looked (`run --strict` rejects).
  'suspicious',
  'patch_error',
  'rejected',
  'timeout',
  'agent_error',
  'infra_error',
  'invalid_fixture',
] as const;

export type SelfcheckVerdict = (typeof SELFCHECK_VERDICTS)[number];
export type AgentVerdict = (typeof AGENT_VERDICTS)[number];
export type Verdict = SelfcheckVerdict | AgentVerdict;

/** Every verdict once, selfcheck's first: the order a refused report lists them in. */
export const VERDICTS: readonly Verdict[] = [...new Set<Verdict>([...SELFCHECK_VERDICTS, ...AGENT_VERDICTS])];

/** Reports, results, run.json and transcript lines: a verdict outside the taxonomy is refused. */
export const VerdictSchema = z.enum(VERDICTS);

const KNOWN: ReadonlySet<string> = new Set(VERDICTS);
/** For keys read back from a record (Object.entries gives strings). */
export const isVerdict = (s: string): s is Verdict => KNOWN.has(s);

/** Verdicts that meet the expectation of their mode (exit code 0). */
export const EXPECTED: ReadonlySet<Verdict> = new Set<Verdict>(['valid', 'resolved']);
/**
 * Verdicts that say nothing about the patch a model would make: left out of the adjusted
 * denominator (the machine failed, the fixture is broken, or the agent command never ran).
 */
export const NOT_SCORED: ReadonlySet<Verdict> = new Set<Verdict>(['infra_error', 'invalid_fixture', 'agent_error']);
