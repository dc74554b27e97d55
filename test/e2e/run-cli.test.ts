import { existsSync, readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { ReportSchema } from '../../harness/reporters/report.js';
import { BUNDLED, useBundledCopy } from '../helpers/bundled.js';
import { runCli } from '../helpers/cli.js';
import { useTempDirs } from '../helpers/temp-dirs.js';

const out = useTempDirs('rg-e2e-run-');
const bundled = useBundledCopy();
const where = (d: string) => ['--reports', d, '--transcripts', d];

describe('redgreen run', () => {
  test('--agent oracle resolves every valid bundled fixture; --agent nop resolves none', async () => {
    const d = await out();
    const { root } = await bundled();
    const oracle = await runCli(['run', '--agent', 'oracle', '--json', ...where(d)], { cwd: root });
    expect(oracle.code).toBe(0);
    const printed = JSON.parse(oracle.stdout) as unknown;
    const r = ReportSchema.parse(printed);
    // Printed (and written) unparsed: it holds nothing its schema would strip.
    expect(r).toEqual(printed);
    expect(r.subject).toBe('oracle');
    expect(r.summary.byVerdict).toEqual({ resolved: BUNDLED.length });
    expect(r.summary.denominators).toEqual({ all: BUNDLED.length, scored: BUNDLED.length });
    const nop = await runCli(['run', 'bug02_off_by_one', 'js_cart_total', '--agent', 'nop', '--json', ...where(d)], { cwd: root });
    expect(nop.code).toBe(1);
    const nopPrinted = JSON.parse(nop.stdout) as unknown;
    const n = ReportSchema.parse(nopPrinted);
    expect(n).toEqual(nopPrinted);
    expect(n.summary.byVerdict).toEqual({ unresolved: 2 });
    expect(n.fixtures.map((f) => f.failToPass)).toEqual([
      { passed: 0, total: 2 },
      { passed: 0, total: 2 },
    ]);
  });

  test('--patches predictions.jsonl: one run per model, bad lines named with their number, the rest graded, the unsubmitted listed', async () => {
    const d = await out();
    const { root, oraclesDir } = await bundled();
    const oracle = readFileSync(path.join(oraclesDir, 'bug02_off_by_one.patch'), 'utf8');
    const preds = path.join(d, 'preds.jsonl');
    await writeFile(
      preds,
      [
        JSON.stringify({ instance_id: 'bug02_off_by_one', model_name_or_path: 'good-model', model_patch: oracle }),
        JSON.stringify({ instance_id: 'bug02_off_by_one', model_name_or_path: 'lazy-model', model_patch: '' }),
        'this line is not json',
        JSON.stringify({ instance_id: 'bug99_nowhere', model_name_or_path: 'good-model', model_patch: oracle }),
        JSON.stringify({ instance_id: 'js_cart_total', model_name_or_path: 'good-model' }),
      ].join('\n'),
    );
    const r = await runCli(['run', 'bug02_off_by_one', 'js_cart_total', '--patches', preds, '--json', ...where(d)], { cwd: root });
    expect(r.stderr).toContain('warning: preds.jsonl:3: not valid JSON');
    expect(r.stderr).toContain('warning: preds.jsonl:4: unknown fixture "bug99_nowhere"');
    // A line without model_patch is a broken line, not an empty patch.
    expect(r.stderr).toContain('warning: preds.jsonl:5: model_patch: no model_patch: give the patch, or "" for an empty one');
    const { runs } = JSON.parse(r.stdout) as { runs: unknown[] };
    const reports = runs.map((x) => ReportSchema.parse(x));
    expect(reports.map((x) => [x.subject, x.fixtures[0]!.verdict])).toEqual([
      ['good-model', 'resolved'],
      ['lazy-model', 'unresolved'],
    ]);
    // js_cart_total has no usable prediction from either model: listed, never run as a failure.
    expect(reports.map((x) => [x.notSubmitted, x.fixtures.length])).toEqual([
      [['js_cart_total'], 1],
      [['js_cart_total'], 1],
    ]);
    // The empty patch is graded without a sandbox: nothing ran.
    expect(reports[1]!.fixtures[0]).toMatchObject({ sandboxId: null, red: null });
    // Each graded patch is kept beside its run's report; an empty one has no file.
    expect(readFileSync(path.join(d, reports[0]!.runId, 'patches', 'bug02_off_by_one.patch'), 'utf8')).toBe(oracle);
    expect(existsSync(path.join(d, reports[1]!.runId, 'patches', 'bug02_off_by_one.patch'))).toBe(false);
    expect(r.code).toBe(1);
  });

  test("several models: each fixture's setup and RED baseline run once for all of them, and replay --verify re-executes a later model as it ran", async () => {
    const d = await out();
    const { root, oraclesDir } = await bundled();
    const oracle = (id: string) => readFileSync(path.join(oraclesDir, `${id}.patch`), 'utf8');
    // Applies, fixes nothing: the tests stay RED.
    const noFix = oracle('bug02_off_by_one').replace('+    end = start + page_size\n', '+    end = start + page_size - 1  # checked\n');
    const preds = path.join(d, 'preds.jsonl');
    const line = (id: string, model: string, patch: string) =>
      JSON.stringify({ instance_id: id, model_name_or_path: model, model_patch: patch });
    await writeFile(
      preds,
      [
        line('bug02_off_by_one', 'good', oracle('bug02_off_by_one')),
        line('js_cart_total', 'good', oracle('js_cart_total')),
        line('bug02_off_by_one', 'other', noFix),
        line('js_cart_total', 'other', oracle('js_cart_total')),
      ].join('\n'),
    );
    const r = await runCli(['run', 'bug02_off_by_one', 'js_cart_total', '--patches', preds, '--json', ...where(d)], { cwd: root });
    const reports = (JSON.parse(r.stdout) as { runs: unknown[] }).runs.map((x) => ReportSchema.parse(x));
    expect(reports.map((x) => x.fixtures.map((f) => [x.subject, f.fixtureId, f.verdict]))).toEqual([
      [
        ['good', 'bug02_off_by_one', 'resolved'],
        ['good', 'js_cart_total', 'resolved'],
      ],
      [
        ['other', 'bug02_off_by_one', 'unresolved'],
        ['other', 'js_cart_total', 'resolved'],
      ],
    ]);
    const [first, second] = reports;
    // The first run made each baseline (in a sandbox of its own); the second used them.
    expect(first!.fixtures.map((f) => f.baselineFrom)).toEqual([undefined, undefined]);
    expect(second!.fixtures.map((f) => f.baselineFrom)).toEqual([first!.runId, first!.runId]);
    expect(second!.fixtures.map((f) => f.red?.state)).toEqual(first!.fixtures.map((f) => f.red?.state));
    const lines = (run: string, id: string) =>
      readFileSync(path.join(d, run, `${id}.jsonl`), 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { type: string; phase?: string });
    const redRuns = (run: string) =>
      ['bug02_off_by_one', 'js_cart_total'].map((id) => lines(run, id).filter((l) => l.type === 'tests' && l.phase === 'red').length);
    expect(redRuns(first!.runId)).toEqual([1, 1]);
    expect(redRuns(second!.runId)).toEqual([0, 0]);
    expect(lines(second!.runId, 'js_cart_total').some((l) => l.type === 'baseline')).toBe(true);
    expect(readFileSync(path.join(d, second!.runId, 'summary.md'), 'utf8')).toContain(`RED baselines shared with another model's run`);
    for (const run of [first!, second!]) {
      const verify = await runCli(['replay', path.join(d, run.runId), '--verify', '--json', ...where(d)], { cwd: root });
      expect(verify.code).toBe(0);
      const drift = JSON.parse(verify.stdout) as { fixtures: { fixtureId: string; status: string }[] };
      expect(drift.fixtures.map((f) => [f.fixtureId, f.status])).toEqual([
        ['bug02_off_by_one', 'same'],
        ['js_cart_total', 'same'],
      ]);
    }
  });

  test('usage: exactly one patch source; an unreadable predictions file is a usage error', async () => {
    const none = await runCli(['run']);
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('give exactly one of --patches');
    const missing = await runCli(['run', '--patches', '/nonexistent/preds.jsonl']);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('does not exist');
  });
});
