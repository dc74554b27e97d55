import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { ReportSchema } from '../../harness/reporters/report.js';
import { BIN, runCli } from '../helpers/cli.js';
import { useTempDirs } from '../helpers/temp-dirs.js';

const tempDir = useTempDirs('rg-resume-');

/** Three quick fixtures and a slow one, run one at a time so a kill lands in the middle. */
async function project(): Promise<string> {
  const root = await tempDir();
  for (const id of ['a_first', 'b_second', 'c_slow', 'd_last']) expect((await runCli(['new', id], { cwd: root })).code).toBe(0);
  await writeFile(path.join(root, 'fixtures/c_slow/test_slow.py'), 'import time\n\ndef test_slow():\n    time.sleep(2)\n');
  return root;
}

const verdicts = (stdout: string) => ReportSchema.parse(JSON.parse(stdout)).fixtures.map((f) => [f.fixtureId, f.verdict, f.red?.counts, f.green?.counts]);

describe('resume', () => {
  test('a run killed with kill -9 halfway resumes to the report an uninterrupted run gives', async () => {
    const root = await project();
    const full = await runCli(['selfcheck', '-j', '1', '--json'], { cwd: root });
    expect(full.code).toBe(0);

    // The same run, killed with SIGKILL while the slow fixture runs.
    const child = spawn(process.execPath, [BIN, 'selfcheck', '-j', '1'], { cwd: root, env: { ...process.env, CI: 'true' } });
    await new Promise<void>((resolve) => {
      let err = '';
      child.stderr.on('data', (d: Buffer) => {
        err += d.toString();
        if (err.includes('b_second')) {
          setTimeout(() => child.kill('SIGKILL'), 700);
          resolve();
        }
      });
    });
    await new Promise((r) => child.on('close', r));
    const runs = readdirSync(path.join(root, 'transcripts')).filter((r) => !JSON.parse(readFileSync(path.join(root, 'transcripts', r, 'run.json'), 'utf8')).status.startsWith('completed'));
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
    const root = await project();
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
});
