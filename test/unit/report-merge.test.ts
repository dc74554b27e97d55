import { describe, expect, test } from 'vitest';
import { mergeShards } from '../../harness/commands/report-merge.js';
import type { LoadedReport } from '../../harness/commands/report.js';
import { ReportSchema, summarize, type Report } from '../../harness/reporters/report.js';
import { report } from '../helpers/reports.js';

const SHA = 'a'.repeat(64);
function shard(index: number, count: number, fixtures: Parameters<typeof report>[1], extra: Partial<Report> = {}): LoadedReport {
  const r = { ...report(`run-${index}`, fixtures), shard: { index, count, of: 5, selectionSha256: SHA }, ...extra };
  return { report: r, file: `/reports/run-${index}/report.json`, transcriptDir: `/transcripts/run-${index}` };
}

describe('report merge', () => {
  test("the shards' fixtures in id order, the summary recomputed over all of them, an ordinary report", () => {
    const one = shard(1, 2, { a: { verdict: 'valid' }, c: { verdict: 'not_green' }, e: { verdict: 'valid' } });
    const two = shard(2, 2, { b: { verdict: 'valid' }, d: { verdict: 'infra_error' } }, { backend: 'bwrap' });
    const merged = mergeShards([two, one]);
    expect(ReportSchema.parse(merged)).toBeTruthy();
    expect(merged.fixtures.map((f) => [f.fixtureId, f.verdict])).toEqual([
      ['a', 'valid'],
      ['b', 'valid'],
      ['c', 'not_green'],
      ['d', 'infra_error'],
      ['e', 'valid'],
    ]);
    expect(merged.summary).toEqual(summarize(merged.fixtures));
    expect(merged.summary.denominators).toEqual({ all: 5, scored: 4 });
    expect(merged.shard).toBeUndefined();
    expect(merged.mergedFrom).toEqual([
      { runId: 'run-1', shard: '1/2', backend: 'local' },
      { runId: 'run-2', shard: '2/2', backend: 'bwrap' },
    ]);
    expect(merged.backend).toBe('local,bwrap');
  });

  test('refuses what is not one run split in shards, saying what differs', () => {
    const a = shard(1, 2, { a: { verdict: 'valid' } });
    const b = shard(2, 2, { b: { verdict: 'valid' } });
    expect(() => mergeShards([a])).toThrow(/shard 2\/2 missing/);
    expect(() => mergeShards([a, a, b])).toThrow(/shard 1\/2 given twice/);
    expect(() => mergeShards([a, { ...b, report: { ...b.report, mode: 'run' } }])).toThrow(
      /the mode is "selfcheck" in run-1 but "run" in run-2/,
    );
    expect(() => mergeShards([a, { ...b, report: { ...b.report, subject: 'gpt' } }])).toThrow(/the subject is "oracle"/);
    const otherSet = { ...b, report: { ...b.report, shard: { index: 2, count: 2, of: 5, selectionSha256: 'b'.repeat(64) } } };
    expect(() => mergeShards([a, otherSet])).toThrow(/the fixture selection/);
    const three = { ...b, report: { ...b.report, shard: { index: 2, count: 3, of: 5, selectionSha256: SHA } } };
    expect(() => mergeShards([a, three])).toThrow(/the shard count/);
    const { shard: _, ...plain } = b.report;
    expect(() => mergeShards([a, { ...b, report: plain }])).toThrow(/not a shard's report: run-2/);
    expect(() => mergeShards([])).toThrow(/needs the reports of the shards/);
  });
});
