import { cp } from 'node:fs/promises';
import path from 'node:path';
import { inject } from 'vitest';

/**
 * One selfcheck of the bundled fixtures, recorded once by the e2e global setup
 * (test/e2e/recorded-run.setup.ts) and read by every e2e file that only needs a finished run:
 * the table, report.json, the transcript, replay, report, compare.
 */
export interface RecordedRun {
  /** A temp project with a copy of the bundled fixtures; treat it as read-only. */
  root: string;
  runId: string;
  reportsDir: string;
  transcriptsDir: string;
  code: number | null;
  stdout: string;
  stderr: string;
}

declare module 'vitest' {
  export interface ProvidedContext {
    recordedRun: RecordedRun;
  }
}

export function recordedRun(): RecordedRun {
  return inject('recordedRun');
}

/** A private copy of the recorded run's report and transcript folders, for a test that alters them. */
export async function copyRecordedRun(dest: string): Promise<{ reportsDir: string; transcriptsDir: string }> {
  const run = recordedRun();
  const copy = { reportsDir: path.join(dest, 'reports'), transcriptsDir: path.join(dest, 'transcripts') };
  await cp(path.join(run.reportsDir, run.runId), path.join(copy.reportsDir, run.runId), { recursive: true });
  await cp(path.join(run.transcriptsDir, run.runId), path.join(copy.transcriptsDir, run.runId), { recursive: true });
  return copy;
}
