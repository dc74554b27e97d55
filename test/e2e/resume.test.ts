import { readdirSync, readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { scaffoldFixture } from '../../harness/fixtures/scaffold.js';
import { ReportSchema } from '../../harness/reporters/report.js';
import { runCli, spawnCli } from '../helpers/cli.js';
import { listenReady, pythonNotify } from '../helpers/ready-socket.js';
import { useTempDirs } from '../helpers/temp-dirs.js';

const tempDir = useTempDirs('rg-resume-');

/**
 * Four fixtures run one at a time; the third one's test checks in on `<root>/running.sock` and,
 * when someone listens there, waits until they let go: a kill lands in the middle of the run, at
 * a point the test observed. Without a listener it passes at once, as any test would.
 */
async function project(): Promise<{ root: string; sock: string }> {
  const root = await tempDir();
  const dirs = { fixturesDir: path.join(root, 'fixtures'), oraclesDir: path.join(root, 'oracles') };
  for (const id of ['a_first', 'b_second', 'd_last']) await scaffoldFixture({ id, runner: 'exit-code', ...dirs });
  await scaffoldFixture({ id: 'c_middle', runner: 'pytest', ...dirs });
  const sock = path.join(root, 'running.sock');
  await writeFile(path.join(dirs.fixturesDir, 'c_middle/test_middle.py'), `def test_middle():\n${pythonNotify(sock, { hold: true })}`);
  return { root, sock };
}

const verdicts = (stdout: string) =>
  ReportSchema.parse(JSON.parse(stdout)).fixtures.map((f) => [f.fixtureId, f.verdict, f.red?.counts, f.green?.counts]);

describe('resume', () => {
  test('a run killed with kill -9 halfway resumes to the report an uninterrupted run gives', async () => {
    const { root, sock } = await project();
    const full = await runCli(['selfcheck', '-j', '1', '--json'], { cwd: root });
    expect(full.code).toBe(0);

    // The same run, killed with SIGKILL while the third fixture's RED tests run.
    const listener = listenReady(sock);
    try {
      const killed = spawnCli(['selfcheck', '-j', '1'], { cwd: root });
      const exitedEarly = killed.result.then((r) =>
        Promise.reject(new Error(`the run ended before the third fixture's test started (exit ${r.code}):\n${r.stderr}`)),
      );
      await Promise.race([listener.connected, exitedEarly]);
      killed.child.kill('SIGKILL');
      expect((await killed.result).signal).toBe('SIGKILL');
    } finally {
      listener.close();
    }
    const runs = readdirSync(path.join(root, 'transcripts')).filter(
      (r) => !JSON.parse(readFileSync(path.join(root, 'transcripts', r, 'run.json'), 'utf8')).status.startsWith('completed'),
    );
    expect(runs).toHaveLength(1);
    const runId = runs[0]!;

    const resumed = await runCli(['selfcheck', '-j', '1', '--json', '--resume', runId], { cwd: root });
    expect(resumed.stderr).toContain(`resuming ${runId}: 2 fixture(s) kept, 2 to run`);
    expect(resumed.code).toBe(0);
    expect(verdicts(resumed.stdout)).toEqual(verdicts(full.stdout));
    expect(ReportSchema.parse(JSON.parse(resumed.stdout)).runId).toBe(runId);
    expect(JSON.parse(readFileSync(path.join(root, 'transcripts', runId, 'run.json'), 'utf8')).status).toBe('completed');
  });

  test('resuming over changed fixtures refuses unless --force; a wrong mode is refused', async () => {
    const { root } = await project();
    const first = await runCli(['selfcheck', 'a_first', '--json'], { cwd: root });
    const runId = ReportSchema.parse(JSON.parse(first.stdout)).runId;
    await writeFile(path.join(root, 'oracles/a_first.patch'), readFileSync(path.join(root, 'oracles/a_first.patch'), 'utf8') + '\n');
    const refused = await runCli(['selfcheck', 'a_first', '--resume', runId], { cwd: root });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('fixtures or oracles changed since run');
    expect(refused.stderr).toContain('a_first');
    expect((await runCli(['selfcheck', 'a_first', '--resume', runId, '--force'], { cwd: root })).code).toBe(0);
    const wrongMode = await runCli(['run', '--agent', 'oracle', '--resume', runId], { cwd: root });
    expect(wrongMode.code).toBe(2);
    expect(wrongMode.stderr).toContain('is a selfcheck run');
    const missing = await runCli(['selfcheck', '--resume', 'no-such-run'], { cwd: root });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('no run to resume');
  });

  test('resume keeps the recorded fixtures, backend and repeat; a flag asking for others is refused unless --force', async () => {
    const { root } = await project();
    const first = await runCli(['selfcheck', 'a_first', '--json'], { cwd: root });
    const runId = ReportSchema.parse(JSON.parse(first.stdout)).runId;
    // No ids: the run's own fixture, not the whole folder.
    const again = await runCli(['selfcheck', '--resume', runId, '--json'], { cwd: root });
    expect(again.code).toBe(0);
    expect(ReportSchema.parse(JSON.parse(again.stdout)).fixtures.map((f) => f.fixtureId)).toEqual(['a_first']);
    for (const [args, says] of [
      [['b_second'], 'fixtures b_second (recorded: a_first)'],
      [['--backend', 'bwrap'], '--backend bwrap (recorded: local)'],
      [['--repeat', '2'], '--repeat 2 (recorded: 1)'],
    ] as const) {
      const r = await runCli(['selfcheck', ...args, '--resume', runId], { cwd: root });
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr).toContain(`run ${runId} was started with other settings: ${says}`);
      expect(r.stderr).toContain('add --force to resume with yours');
    }
    const forced = await runCli(['selfcheck', '--repeat', '2', '--resume', runId, '--force', '--json'], { cwd: root });
    expect(forced.code).toBe(0);
    expect(ReportSchema.parse(JSON.parse(forced.stdout))).toMatchObject({ runId, repeat: 2 });
  });
});
