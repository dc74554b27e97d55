import { readFileSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { scaffoldFixture } from '../../harness/fixtures/scaffold.js';
import { ReportSchema, type Report } from '../../harness/reporters/report.js';
import { runCli } from '../helpers/cli.js';
import { useTempDirs } from '../helpers/temp-dirs.js';

const tempDir = useTempDirs('rg-shards-');

/** Seven quick fixtures: five valid (two tagged), one whose oracle is broken, one whose manifest is. */
async function project(): Promise<string> {
  const root = await tempDir();
  const dirs = { fixturesDir: path.join(root, 'fixtures'), oraclesDir: path.join(root, 'oracles') };
  for (const id of ['ok_a', 'ok_b', 'ok_c', 'ok_d', 'ok_e', 'stale']) await scaffoldFixture({ id, runner: 'exit-code', ...dirs });
  await scaffoldFixture({ id: 'broken', runner: 'exit-code', ...dirs });
  await writeFile(path.join(root, 'oracles/stale.patch'), 'not a patch\n');
  for (const id of ['ok_b', 'ok_d']) {
    const file = path.join(root, 'fixtures', id, 'fixture.json');
    await writeFile(file, JSON.stringify({ ...JSON.parse(await readFile(file, 'utf8')), tags: ['fast'] }));
  }
  await writeFile(path.join(root, 'fixtures/broken/fixture.json'), '{ "id": "broken",\n  "runner": }\n');
  return root;
}

const json = (stdout: string) => ReportSchema.parse(JSON.parse(stdout));
const verdicts = (r: Report) => Object.fromEntries(r.fixtures.map((f) => [f.fixtureId, f.verdict]));

describe('shards and selection', () => {
  test('--shard 1/2 and 2/2 merged with report merge give the verdicts, summary and JUnit of one unsharded run', async () => {
    const root = await project();
    const full = json((await runCli(['selfcheck', '--json'], { cwd: root })).stdout);
    const one = await runCli(['selfcheck', '--shard', '1/2', '--json'], { cwd: root });
    const two = await runCli(['selfcheck', '--shard', '2/2', '--json'], { cwd: root });
    const [r1, r2] = [json(one.stdout), json(two.stdout)];
    expect(one.stderr).toContain('shard 1/2');
    // Each fixture in exactly one shard, split by id order.
    expect([...r1.fixtures, ...r2.fixtures].map((f) => f.fixtureId).sort()).toEqual(full.fixtures.map((f) => f.fixtureId).sort());
    expect(r1.fixtures.map((f) => f.fixtureId).sort()).toEqual(['broken', 'ok_b', 'ok_d', 'stale']);

    const merged = await runCli(['report', 'merge', r2.runId, r1.runId, '--json'], { cwd: root });
    expect(merged.stderr).toBe('');
    const m = json(merged.stdout);
    expect(verdicts(m)).toEqual(verdicts(full));
    expect(m.summary.byVerdict).toEqual({ invalid_fixture: 1, valid: 5, patch_error: 1 });
    expect([m.summary.expected, m.summary.denominators]).toEqual([full.summary.expected, full.summary.denominators]);
    expect(m.mergedFrom!.map((s) => s.shard)).toEqual(['1/2', '2/2']);
    // The same exit code as the unsharded run (an invalid fixture: 2).
    expect(merged.code).toBe(2);
    const junit = readFileSync(path.join(root, 'reports', m.runId, 'junit.xml'), 'utf8');
    expect(junit.match(/<testcase /g)).toHaveLength(7);
    // An ordinary run report: the other commands read it.
    const cmp = await runCli(['compare', full.runId, m.runId, '--json'], { cwd: root });
    expect(cmp.code).toBe(0);
    expect((JSON.parse(cmp.stdout) as { verdictChanges: unknown[] }).verdictChanges).toEqual([]);
    expect((await runCli(['report', m.runId, '--format', 'md', '--out', '-'], { cwd: root })).stdout).toContain('valid 5/7');
    // The shards' transcripts (here on this machine) make the merged run's: replay tells all of it.
    const story = await runCli(['replay', m.runId, '--speed', '0'], { cwd: root });
    expect(story.code).toBe(0);
    expect(story.stdout).toContain('7 fixture(s) replayed');

    // What is not one run's shards is refused with what differs.
    const missing = await runCli(['report', 'merge', r1.runId], { cwd: root });
    expect([missing.code, missing.stderr]).toEqual([2, expect.stringContaining('shard 2/2 missing')]);
    const graded = json((await runCli(['run', '--agent', 'oracle', '--shard', '2/2', '--json'], { cwd: root })).stdout);
    const mixed = await runCli(['report', 'merge', r1.runId, graded.runId], { cwd: root });
    expect([mixed.code, mixed.stderr]).toEqual([2, expect.stringContaining('the mode is "selfcheck"')]);
    const plain = await runCli(['report', 'merge', r1.runId, full.runId], { cwd: root });
    expect(plain.stderr).toContain(`not a shard's report: ${full.runId}`);
    const tagged = json((await runCli(['selfcheck', '--tag', 'fast', '--shard', '2/2', '--json'], { cwd: root })).stdout);
    const other = await runCli(['report', 'merge', r1.runId, tagged.runId], { cwd: root });
    expect(other.stderr).toContain('the fixture selection');
  });

  test("globs and --tag select; list shows runner, tags and each fixture's last verdict", async () => {
    const root = await project();
    const glob = json((await runCli(['selfcheck', 'ok_[a-c]', '--json'], { cwd: root })).stdout);
    expect(glob.fixtures.map((f) => f.fixtureId)).toEqual(['ok_a', 'ok_b', 'ok_c']);
    const none = await runCli(['selfcheck', 'bug0*'], { cwd: root });
    expect([none.code, none.stderr]).toEqual([2, expect.stringContaining('no fixture matches "bug0*"')]);
    const tagged = json((await runCli(['selfcheck', '--tag', 'fast', '--json'], { cwd: root })).stdout);
    expect(tagged.fixtures.map((f) => f.fixtureId)).toEqual(['ok_b', 'ok_d']);
    const listed = await runCli(['list', '--json'], { cwd: root });
    const rows = JSON.parse(listed.stdout) as {
      id: string;
      runner: string | null;
      tags: string[];
      last: { verdict: string; runId: string } | null;
      problem?: string;
    }[];
    const row = (id: string) => rows.find((r) => r.id === id)!;
    expect(row('ok_b')).toMatchObject({ runner: 'exit-code', tags: ['fast'], last: { verdict: 'valid', runId: tagged.runId } });
    expect(row('ok_e')).toMatchObject({ tags: [], last: null });
    expect(row('broken')).toMatchObject({ runner: null, problem: expect.stringContaining('not valid JSON') });
    expect((await runCli(['list', 'ok_*', '--tag', 'fast'], { cwd: root })).stdout).toMatch(/ok_b +exit-code +fast +valid/);
  });

  test('--bail N stops after N missed fixtures; the rest is unfinished and --resume finishes the run', async () => {
    const root = await project();
    // First in id order, so the run stops before the others start.
    await scaffoldFixture({
      id: 'aa_stale',
      runner: 'exit-code',
      fixturesDir: path.join(root, 'fixtures'),
      oraclesDir: path.join(root, 'oracles'),
    });
    await writeFile(path.join(root, 'oracles/aa_stale.patch'), 'not a patch\n');
    const bailed = await runCli(['selfcheck', 'aa_*', 'ok_*', '--bail', '1', '-j', '1', '--json'], { cwd: root });
    const r = json(bailed.stdout);
    expect(bailed.code).toBe(1);
    expect(r.bailed).toBe(1);
    expect(r.fixtures.map((f) => [f.fixtureId, f.verdict])).toEqual([['aa_stale', 'patch_error']]);
    expect(r.unfinished).toEqual(['ok_a', 'ok_b', 'ok_c', 'ok_d', 'ok_e']);
    expect(bailed.stderr).toContain(`stopped after 1 fixture(s) missed (--bail)`);
    expect(bailed.stderr).toContain(`--resume ${r.runId}`);
    const resumed = json((await runCli(['selfcheck', '-j', '1', '--json', '--resume', r.runId], { cwd: root })).stdout);
    expect(resumed.fixtures.map((f) => f.verdict)).toEqual(['patch_error', 'valid', 'valid', 'valid', 'valid', 'valid']);
    expect(resumed.unfinished).toEqual([]);
  });
});
