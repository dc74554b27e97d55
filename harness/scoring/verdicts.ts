import { z } from 'zod';

/** One taxonomy for every reporter (design: Verdicts). */
export const SELFCHECK_VERDICTS = ['valid', 'not_red', 'not_green', 'patch_error', 'timeout', 'flaky', 'infra_error', 'invalid_fixture'] as const;
export const AGENT_VERDICTS = ['resolved', 'unresolved', 'patch_error', 'rejected', 'timeout', 'infra_error', 'invalid_fixture'] as const;

export const VerdictSchema = z.enum([...new Set([...SELFCHECK_VERDICTS, ...AGENT_VERDICTS])] as [string, ...string[]]);
export type SelfcheckVerdict = (typeof SELFCHECK_VERDICTS)[number];
export type AgentVerdict = (typeof AGENT_VERDICTS)[number];
export type Verdict = SelfcheckVerdict | AgentVerdict;

/** Verdicts that meet the expectation of their mode (exit code 0). */
export const EXPECTED: ReadonlySet<Verdict> = new Set(['valid', 'resolved']);
/** Verdicts that say nothing about the fixture or the patch: left out of the adjusted denominator. */
export const NOT_SCORED: ReadonlySet<Verdict> = new Set(['infra_error', 'invalid_fixture']);
