import { readdir, rm } from 'node:fs/promises';
import path from 'node:path';
import type { TestProject } from 'vitest/node';
import { bundledProject } from '../helpers/bundled.js';
import { runCli } from '../helpers/cli.js';
import type { RecordedRun } from '../helpers/recorded-run.js';

/** Records one selfcheck of (a copy of) the bundled fixtures for the e2e files to share. */
export async function setup(project: TestProject): Promise<() => Promise<void>> {
  const root = await bundledProject('rg-e2e-recorded-');
  const r = await runCli(['selfcheck'], { cwd: root });
  const runs = await readdir(path.join(root, 'reports')).catch(() => []);
  if (runs.length !== 1)
    throw new Error(
      `the shared selfcheck of the bundled fixtures wrote ${runs.length} reports (exit ${r.code}):\n${r.stdout}\n${r.stderr}`,
    );
  const run: RecordedRun = {
    root,
    runId: runs[0]!,
    reportsDir: path.join(root, 'reports'),
    transcriptsDir: path.join(root, 'transcripts'),
    code: r.code,
    stdout: r.stdout,
    stderr: r.stderr,
  };
  project.provide('recordedRun', run);
  return () => rm(root, { recursive: true, force: true });
}
