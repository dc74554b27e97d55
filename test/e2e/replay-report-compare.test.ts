import { spawnSync } from 'node:child_process';
import { cp, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { XMLValidator } from 'fast-xml-parser';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { ReportSchema, type Report } from '../../harness/reporters/report.js';
import type { Verdict } from '../../harness/scoring/verdicts.js';
import { BUNDLED } from '../helpers/bundled.js';
import { runCli } from '../helpers/cli.js';
import { copyRecordedRun, recordedRun } from '../helpers/recorded-run.js';

/** The shared recorded selfcheck of the bundled fixtures; this file works on its own copy of it. */
const recorded = recordedRun();
const N = BUNDLED.length;
const TWO = ['--fixture', 'bug02_off_by_one', '--fixture', 'js_cart_total'];
let out: string;
let dirs: { reportsDir: string; transcriptsDir: string };
let report: Report;
let runDir: string;
const where = () => ['--reports', dirs.reportsDir, '--transcripts', dirs.transcriptsDir];

/** bwrap must be tested in CI; on a machine without it, only local is. */
function bwrapAvailable(): boolean {
  const ok = spawnSync('bwrap', ['--unshare-all', '--ro-bind', '/', '/', 'true'], { stdio: 'ignore' }).status === 0;
  if (!ok && process.env.CI) throw new Error('CI must verify replays on bwrap, but bwrap does not work here');
  return ok;
}

/** A copy of the run's report under another run id, with some fixtures' verdicts changed. */
async function doctored(runId: string, verdicts: Record<string, Verdict>, drop: string[] = []): Promise<string> {
  const r: Report = {
    ...report,
    runId,
    fixtures: report.fixtures
      .filter((f) => !drop.includes(f.fixtureId))
      .map((f) => ({ ...f, ...(verdicts[f.fixtureId] ? { verdict: verdicts[f.fixtureId]!, reason: 'doctored' } : {}) })),
  };
  await mkdir(path.join(dirs.reportsDir, runId), { recursive: true });
  await writeFile(path.join(dirs.reportsDir, runId, 'report.json'), JSON.stringify(r));
  return runId;
}

beforeAll(async () => {
  out = await mkdtemp(path.join(os.tmpdir(), 'rg-e2e-replay-'));
  dirs = await copyRecordedRun(out);
  report = ReportSchema.parse(JSON.parse(await readFile(path.join(dirs.reportsDir, recorded.runId, 'report.json'), 'utf8')));
  runDir = path.join(dirs.transcriptsDir, report.runId);
});
afterAll(async () => {
  await rm(out, { recursive: true, force: true });
});

describe('replay', () => {
  test('--speed 0 tells every fixture of a real selfcheck at once', async () => {
    const r = await runCli(['replay', runDir, '--speed', '0']);
    expect(r.code).toBe(0);
    expect(r.stderr).toBe('');
    for (const id of BUNDLED) expect(r.stdout).toContain(`━━ ${id}`);
    expect(r.stdout).toContain('$ python3 -m pytest -q');
    expect(r.stdout).toMatch(/RED tests · cwd \S+ · env PYTEST_ADDOPTS, PYTHONPATH · exit 1 · /);
    expect(r.stdout).toContain('-    end = start + page_size - 1');
    expect(r.stdout).toMatch(/test_pager\.py::test_second_page_full\s+✘ failed\s+✔ passed/);
    expect(r.stdout).toContain(`${N} fixture(s) replayed: valid ${N}`);
    const one = await runCli(['replay', report.runId, '--fixture', 'js_cart_total', '--speed', '0', '--transcripts', dirs.transcriptsDir]);
    expect(one.stdout).toContain('━━ js_cart_total');
    expect(one.stdout).not.toContain('━━ bug02_off_by_one');
    const unknown = await runCli(['replay', runDir, '--fixture', 'nope', '--speed', '0']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('not in run');
    expect((await runCli(['replay', runDir, '--speed', '-1'])).stderr).toContain('--speed: must be a number ≥ 0');
  });

  test('a corrupted line and a torn last line: named with their numbers, the rest still shown; an old schema is refused by name', async () => {
    const copy = path.join(out, 'damaged');
    await cp(runDir, copy, { recursive: true });
    const file = path.join(copy, 'bug02_off_by_one.jsonl');
    const lines = (await readFile(file, 'utf8')).trimEnd().split('\n');
    lines[2] = '{"t": 12, "type": "phase", garbage';
    await writeFile(file, `${lines.join('\n')}\n{"t":99999,"ts":"x","type":"comm`);
    const r = await runCli(['replay', copy, '--speed', '0']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('bug02_off_by_one.jsonl:3: not valid JSON');
    expect(r.stdout).toContain(`bug02_off_by_one.jsonl:${lines.length + 1}: torn last line`);
    expect(r.stdout).toContain('verdict: valid');
    expect(r.stderr).toContain('1 transcript line(s) could not be read');
    const run = JSON.parse(await readFile(path.join(copy, 'run.json'), 'utf8')) as { schema: string };
    await writeFile(path.join(copy, 'run.json'), JSON.stringify({ ...run, schema: 'redgreen.run/0' }));
    const old = await runCli(['replay', copy, '--speed', '0']);
    expect(old.code).toBe(2);
    expect(old.stderr).toContain('schema "redgreen.run/0"');
    expect(old.stderr).toContain('this redgreen reads redgreen.run/1');
  });

  test('--verify re-executes the run and shows no drift, on local and on bwrap', async () => {
    for (const backend of ['local', ...(bwrapAvailable() ? ['bwrap'] : [])]) {
      const r = await runCli(['replay', runDir, '--verify', ...TWO, '--backend', backend, '--root', recorded.root]);
      expect(r.stdout).toContain(`2 without drift, 0 drifted, 0 skipped — replayed on ${backend}, recorded on local`);
      expect(r.code).toBe(0);
    }
  });

  test('--verify reports drift with the first difference and exits 1', async () => {
    const copy = path.join(out, 'altered');
    await cp(runDir, copy, { recursive: true });
    const file = path.join(copy, 'js_cart_total.jsonl');
    const text = await readFile(file, 'utf8');
    // The recording now claims GREEN exited 1 with a failing test: the re-execution disagrees.
    const altered = text
      .split('\n')
      .map((l) =>
        l.includes('"label":"GREEN tests"')
          ? l.replace('"exitCode":0', '"exitCode":1')
          : l.includes('"type":"tests","phase":"green"')
            ? l.replace('"status":"passed"', '"status":"failed"')
            : l,
      );
    await writeFile(file, altered.join('\n'));
    const r = await runCli(['replay', copy, '--verify', ...TWO, '--json', '--root', recorded.root]);
    expect(r.code).toBe(1);
    const drift = JSON.parse(r.stdout) as { drifted: number; fixtures: { fixtureId: string; status: string; differences: string[] }[] };
    expect(drift.drifted).toBe(1);
    const cart = drift.fixtures.find((f) => f.fixtureId === 'js_cart_total')!;
    expect(cart.status).toBe('drift');
    expect(cart.differences[0]).toBe('GREEN tests: exit code 1 recorded, 0 now');
    expect(cart.differences[1]).toMatch(/^GREEN tests: test\/cart\.test\.js::.* failed recorded, passed now$/);
    expect(drift.fixtures.find((f) => f.fixtureId === 'bug02_off_by_one')!.status).toBe('same');
  });

  test('--verify refuses a fixture whose content changed since the recording', async () => {
    const root = await mkdtemp(path.join(os.tmpdir(), 'rg-e2e-verify-'));
    try {
      expect((await runCli(['new', 'my_bug'], { cwd: root })).code).toBe(0);
      expect((await runCli(['selfcheck'], { cwd: root })).code).toBe(0);
      const [runId] = (await readdir(path.join(root, 'transcripts'))).filter((n) => n.includes('-selfcheck-'));
      await writeFile(path.join(root, 'fixtures/my_bug/calc.py'), '# changed\n', { flag: 'a' });
      const r = await runCli(['replay', `transcripts/${runId}`, '--verify'], { cwd: root });
      expect(r.code).toBe(1);
      expect(r.stdout).toMatch(/✘ my_bug {2}drift: fixture content changed: sha256 \w{12}… recorded, \w{12}… now/);
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });
});

describe('report', () => {
  test('re-renders report.html, junit.xml and summary.md from report.json', async () => {
    const dest = path.join(out, 'rendered');
    const r = await runCli(['report', report.runId, '--format', 'html,junit,md', '--out', dest, ...where()]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`html: ${path.join(dest, 'report.html')}`);
    const html = await readFile(path.join(dest, 'report.html'), 'utf8');
    expect(html).toContain('end = start + page_size - 1'); // the patch, from the transcript
    expect(html).toContain('2 failed, 3 passed in'); // the RED log
    expect(XMLValidator.validate(await readFile(path.join(dest, 'junit.xml'), 'utf8'))).toBe(true);
    expect(await readFile(path.join(dest, 'summary.md'), 'utf8')).toContain(`**${N}/${N}** valid of all fixtures`);
    // Every run already wrote them next to its report.json.
    const reportDir = path.join(dirs.reportsDir, report.runId);
    for (const f of ['report.html', 'junit.xml', 'summary.md'])
      expect((await readFile(path.join(reportDir, f), 'utf8')).length).toBeGreaterThan(100);
    // The run's page took its patches and logs from the run's events: the same as the transcript gives.
    const data = (h: string) => JSON.parse(/<script type="application\/json" id="rg-data">([\s\S]*?)<\/script>/.exec(h)![1]!) as unknown;
    expect(data(await readFile(path.join(reportDir, 'report.html'), 'utf8'))).toEqual(data(html));
    const md = await runCli(['report', reportDir, '--format', 'md', '--out', '-']);
    expect(md.stdout).toMatch(new RegExp(`^## ✅ redgreen selfcheck · oracle — valid ${N}/${N}`));
  });

  test('several runs make one matrix; a missing or invalid report.json is a clear usage error', async () => {
    const b = await doctored('model-b', { js_cart_total: 'not_green' });
    const matrix = path.join(out, 'matrix.html');
    const r = await runCli(['report', report.runId, b, '--format', 'html', '--out', matrix, ...where()]);
    expect(r.code).toBe(0);
    expect(await readFile(matrix, 'utf8')).toContain(`${N} fixtures × 2 runs`);
    expect((await runCli(['report', report.runId, b, ...where()])).stderr).toContain('say where it goes with --out');
    const missing = await runCli(['report', 'no-such-run', ...where()]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain(`no report at ${path.join(dirs.reportsDir, 'no-such-run', 'report.json')}`);
    await mkdir(path.join(dirs.reportsDir, 'bad'), { recursive: true });
    await writeFile(path.join(dirs.reportsDir, 'bad', 'report.json'), JSON.stringify({ ...report, fixtures: [{ fixtureId: 1 }] }));
    const invalid = await runCli(['report', 'bad', ...where()]);
    expect(invalid.code).toBe(2);
    expect(invalid.stderr).toContain('not a valid redgreen.report/1 report');
    expect(invalid.stderr).toContain('field "fixtures.0.fixtureId"');
    expect((await runCli(['report', report.runId, '--format', 'pdf', ...where()])).stderr).toContain(
      '--format "pdf": formats are html, junit and md',
    );
  });
});

describe('compare', () => {
  test('the same run twice: no change, exit 0; a previously valid fixture regressing: exit 1, listed first', async () => {
    const same = await runCli(['compare', report.runId, report.runId, ...where()]);
    expect(same.code).toBe(0);
    expect(same.stdout).toContain('✔ no regression');
    const worse = await doctored('worse', { js_cart_total: 'not_green', bug02_off_by_one: 'valid' });
    const r = await runCli(['compare', report.runId, worse, ...where()]);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/verdict changes \(1\):\n {2}✘ regression {3}js_cart_total {2}valid → not_green {2}doctored/);
  });

  test('runs over different fixture sets report the difference instead of crashing', async () => {
    const fewer = await doctored('fewer', {}, ['js_cart_total']);
    const r = await runCli(['compare', report.runId, fewer, '--json', ...where()]);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ onlyInA: ['js_cart_total'], onlyInB: [], common: N - 1, regressions: 0 });
    const text = await runCli(['compare', fewer, report.runId, ...where()]);
    expect(text.stdout).toContain('only in B (1): js_cart_total');
  });
});
