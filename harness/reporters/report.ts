import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { FixtureResultSchema, PHASES, type FixtureResult } from '../pipeline/result.js';
import { EXPECTED, isVerdict, NOT_SCORED, VerdictSchema, type Verdict } from '../scoring/verdicts.js';
import { writeAtomic } from '../transcripts/writer.js';

export const REPORT_SCHEMA = 'redgreen.report/1';

const SummarySchema = z.object({
  total: z.number(),
  /** Only the verdicts that occur, in the order they first occur. */
  byVerdict: z.partialRecord(VerdictSchema, z.number()),
  /** Fixtures that met the mode's expectation (valid / resolved). */
  expected: z.number(),
  denominators: z.object({
    all: z.number().describe('every fixture of the run'),
    scored: z.number().describe('all minus infra_error, agent_error and invalid_fixture'),
  }),
  rate: z.object({ ofAll: z.number(), ofScored: z.number() }),
  tests: z.object({
    red: z.object({ passed: z.number(), failed: z.number() }),
    green: z.object({ passed: z.number(), failed: z.number() }),
  }),
  /** Sum of each phase's time over all fixtures, in ms. */
  phaseTotalsMs: z.record(z.string(), z.number()),
});

export const ReportSchema = z.object({
  schema: z.literal(REPORT_SCHEMA),
  runId: z.string(),
  mode: z.enum(['selfcheck', 'run']),
  /** What was graded: "oracle" for selfcheck, a model or an agent for runs. */
  subject: z.string(),
  backend: z.string(),
  concurrency: z.number(),
  repeat: z.number(),
  startedAt: z.string(),
  finishedAt: z.string(),
  durationMs: z.number(),
  interrupted: z.boolean(),
  unfinished: z.array(z.string()),
  /** Fixtures the patch source has no patch for: not run, and in no denominator. */
  notSubmitted: z.array(z.string()).optional(),
  /** `--bail N`: the run stopped after N fixtures missed their expectation; the rest is in `unfinished`. */
  bailed: z.number().optional(),
  /** `--shard i/n`: this run is part `index` of `count` of a selection of `of` fixtures (sha256 of their sorted ids). */
  shard: z.object({ index: z.number(), count: z.number(), of: z.number(), selectionSha256: z.string() }).optional(),
  /** `report merge`: the shard runs this report combines. */
  mergedFrom: z.array(z.object({ runId: z.string(), shard: z.string(), backend: z.string() })).optional(),
  summary: SummarySchema,
  fixtures: z.array(FixtureResultSchema),
});
export type Report = z.infer<typeof ReportSchema>;

/** The JSON Schema of report.json (report.schema.json, shipped with the package), from the same zod schema. */
export function reportJsonSchema(): Record<string, unknown> {
  return { title: `redgreen report (${REPORT_SCHEMA})`, ...z.toJSONSchema(ReportSchema, { io: 'output', target: 'draft-2020-12' }) };
}
export type Summary = z.infer<typeof SummarySchema>;

/** byVerdict as typed pairs, in its own order (the order the verdicts first occurred). */
export function verdictCounts(byVerdict: Summary['byVerdict']): [Verdict, number][] {
  const out: [Verdict, number][] = [];
  for (const [v, n] of Object.entries(byVerdict)) if (isVerdict(v) && n !== undefined) out.push([v, n]);
  return out;
}

export function summarize(results: readonly FixtureResult[]): Summary {
  const byVerdict: Summary['byVerdict'] = {};
  const tests = { red: { passed: 0, failed: 0 }, green: { passed: 0, failed: 0 } };
  const phaseTotalsMs: Record<string, number> = Object.fromEntries(PHASES.map((p) => [p, 0]));
  for (const r of results) {
    byVerdict[r.verdict] = (byVerdict[r.verdict] ?? 0) + 1;
    for (const [k, phase] of [
      ['red', r.red],
      ['green', r.green],
    ] as const) {
      if (!phase) continue;
      tests[k].passed += phase.counts.passed;
      tests[k].failed += phase.counts.failed + phase.counts.errors;
    }
    for (const [p, ms] of Object.entries(r.timings)) phaseTotalsMs[p] = Math.round(((phaseTotalsMs[p] ?? 0) + ms) * 10) / 10;
  }
  const expected = results.filter((r) => EXPECTED.has(r.verdict)).length;
  const scored = results.filter((r) => !NOT_SCORED.has(r.verdict)).length;
  const ratio = (n: number, d: number) => (d ? Math.round((n / d) * 10000) / 10000 : 0);
  return {
    total: results.length,
    byVerdict,
    expected,
    denominators: { all: results.length, scored },
    rate: { ofAll: ratio(expected, results.length), ofScored: ratio(expected, scored) },
    tests,
    phaseTotalsMs,
  };
}

/** Where several models' runs shared RED baselines: a line for every report format, or null. */
export function sharedBaselineNote(report: Pick<Report, 'fixtures'>): string | null {
  const from = new Map<string, number>();
  for (const f of report.fixtures) if (f.baselineFrom) from.set(f.baselineFrom, (from.get(f.baselineFrom) ?? 0) + 1);
  if (!from.size) return null;
  const runs = [...from].map(([run, n]) => `${n} from run ${run}`).join(', ');
  return `RED baselines shared with another model's run (run once for all models, not again here): ${runs}`;
}

export async function writeReport(reportsRoot: string, report: Report): Promise<string> {
  const dir = path.join(reportsRoot, report.runId);
  await mkdir(dir, { recursive: true });
  const file = path.join(dir, 'report.json');
  // Written as the run made it, as `--format json` prints it: typed by the schema, so not parsed
  // again (for 1,000 fixtures a parse cost 150 ms; the tests check that it would strip nothing).
  await writeAtomic(file, `${JSON.stringify(report, null, 2)}\n`);
  return file;
}
