import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';
import { loadReport } from '../../harness/commands/report.js';
import { RedgreenError } from '../../harness/errors.js';
import { summarize, verdictCounts } from '../../harness/reporters/report.js';
import { AGENT_VERDICTS, SELFCHECK_VERDICTS, VERDICTS, VerdictSchema, isVerdict } from '../../harness/scoring/verdicts.js';
import { LineSchema } from '../../harness/transcripts/line-schema.js';
import { RunStateSchema } from '../../harness/transcripts/schema.js';
import { fixture, report } from '../helpers/reports.js';

const roots: string[] = [];
afterEach(async () => {
  await Promise.all(roots.splice(0).map((d) => rm(d, { recursive: true, force: true })));
});

/** Writes `json` as reports/<runId>/report.json and loads it the way `redgreen report` does. */
async function load(json: unknown): Promise<RedgreenError | null> {
  const root = await mkdtemp(path.join(os.tmpdir(), 'rg-verdicts-'));
  roots.push(root);
  const reportsDir = path.join(root, 'reports');
  await mkdir(path.join(reportsDir, 'run-1'), { recursive: true });
  await writeFile(path.join(reportsDir, 'run-1', 'report.json'), JSON.stringify(json));
  try {
    await loadReport('run-1', { reportsDir, transcriptsDir: path.join(root, 'transcripts') });
    return null;
  } catch (e) {
    if (e instanceof RedgreenError) return e;
    throw e;
  }
}

describe('the verdict taxonomy', () => {
  test("every verdict once, selfcheck's first, and nothing else", () => {
    expect(VERDICTS).toEqual([
      'valid',
      'not_red',
      'not_green',
      'patch_error',
      'timeout',
      'flaky',
      'infra_error',
      'invalid_fixture',
      'resolved',
      'unresolved',
      'suspicious',
      'rejected',
      'agent_error',
    ]);
    expect(new Set([...SELFCHECK_VERDICTS, ...AGENT_VERDICTS])).toEqual(new Set(VERDICTS));
    expect(VerdictSchema.options).toEqual([...VERDICTS]);
    expect(isVerdict('resolved')).toBe(true);
    expect(isVerdict('passed')).toBe(false);
  });

  test('summary.byVerdict keeps the order verdicts first occur in, typed by verdictCounts', () => {
    const s = summarize([
      fixture('a', { verdict: 'not_green' }),
      fixture('b', { verdict: 'valid' }),
      fixture('c', { verdict: 'not_green' }),
    ]);
    expect(Object.keys(s.byVerdict)).toEqual(['not_green', 'valid']);
    expect(verdictCounts(s.byVerdict)).toEqual([
      ['not_green', 2],
      ['valid', 1],
    ]);
  });
});

describe('a verdict outside the taxonomy is refused, with the field named', () => {
  test('a report.json whose fixture has an unknown verdict', async () => {
    const r = JSON.parse(JSON.stringify(report('run-1', { a: { verdict: 'valid' } })));
    expect(await load(r)).toBeNull();
    r.fixtures[0].verdict = 'success';
    const e = await load(r);
    expect(e?.code).toBe('REPORT_INVALID');
    expect(e?.message).toContain('field "fixtures.0.verdict"');
    expect(e?.message).toContain('"invalid_fixture"');
  });

  test('a report.json whose summary counts an unknown verdict', async () => {
    const r = JSON.parse(JSON.stringify(report('run-1', { a: { verdict: 'valid' } })));
    r.summary.byVerdict = { valid: 1, success: 1 };
    const e = await load(r);
    expect(e?.code).toBe('REPORT_INVALID');
    expect(e?.message).toContain('field "summary.byVerdict"');
    expect(e?.message).toContain('"success"');
  });

  test('a transcript verdict line and a run.json entry', () => {
    const line = LineSchema.safeParse({ t: 1, ts: '2026-01-01T00:00:00.000Z', type: 'verdict', verdict: 'success', reason: 'r' });
    expect(line.success).toBe(false);
    expect(line.error?.issues.map((i) => i.path)).toContainEqual(['verdict']);
    expect(LineSchema.safeParse({ t: 1, ts: '2026-01-01T00:00:00.000Z', type: 'verdict', verdict: 'resolved', reason: 'r' }).success).toBe(
      true,
    );

    const run = {
      schema: 'redgreen.run/1',
      runId: 'run-1',
      mode: 'selfcheck',
      status: 'completed',
      startedAt: 'x',
      updatedAt: 'x',
      backend: 'local',
      options: {},
      harness: { version: '0', node: 'v20', platform: 'linux' },
      fixtures: { a: { status: 'done', verdict: 'valid', transcript: 'a.jsonl' } },
    };
    expect(RunStateSchema.safeParse(run).success).toBe(true);
    const bad = RunStateSchema.safeParse({ ...run, fixtures: { a: { status: 'done', verdict: 'success', transcript: 'a.jsonl' } } });
    expect(bad.error?.issues.map((i) => i.path)).toEqual([['fixtures', 'a', 'verdict']]);
  });
});
