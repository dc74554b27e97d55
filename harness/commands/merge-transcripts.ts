import { copyFile, mkdir } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { harnessVersion } from '../config/paths.js';
import type { Report } from '../reporters/report.js';
import { openRun } from '../transcripts/reader.js';
import { RUN_SCHEMA, type RunState } from '../transcripts/schema.js';
import { writeAtomic } from '../transcripts/writer.js';
import type { LoadedReport } from './report.js';

/**
 * The merged run's transcript, from the shards' where they are on this machine (a CI artifact may
 * hold only the reports): each fixture's JSONL copied as it was recorded, and a run.json naming
 * them, so `replay` (and --verify) and report.html's logs work on the merged run as on any other.
 * Returns the shards whose transcript is not here.
 */
export async function mergeTranscripts(merged: Report, shards: readonly LoadedReport[], transcriptsDir: string): Promise<string[]> {
  const dir = path.join(transcriptsDir, merged.runId);
  const fixtures: RunState['fixtures'] = {};
  const absent: string[] = [];
  for (const shard of shards) {
    const run = await openRun(shard.transcriptDir).catch(() => null);
    if (!run) {
      absent.push(shard.report.runId);
      continue;
    }
    await mkdir(dir, { recursive: true });
    for (const [id, f] of Object.entries(run.state.fixtures)) {
      // Each fixture ran in exactly one shard; its file keeps its name.
      await copyFile(path.join(run.dir, f.transcript), path.join(dir, f.transcript)).catch(() => undefined);
      fixtures[id] = f;
    }
  }
  if (!Object.keys(fixtures).length) return absent;
  const state: RunState = {
    schema: RUN_SCHEMA,
    runId: merged.runId,
    mode: merged.mode,
    status: merged.interrupted ? 'interrupted' : 'completed',
    startedAt: merged.startedAt,
    updatedAt: new Date().toISOString(),
    backend: merged.backend,
    options: { subject: merged.subject, repeat: merged.repeat, mergedFrom: merged.mergedFrom },
    harness: { version: harnessVersion(), node: process.version, platform: `${os.platform()}-${os.arch()}` },
    fixtures,
  };
  await writeAtomic(path.join(dir, 'run.json'), `${JSON.stringify(state, null, 2)}\n`);
  return absent;
}
