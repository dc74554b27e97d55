import { readFile, rename } from 'node:fs/promises';
import path from 'node:path';
import { jsonProblem, RedgreenError } from '../errors.js';
import { FixtureResultSchema, type FixtureResult } from '../pipeline/result.js';
import { RUN_SCHEMA, RunStateSchema, type RunState } from './schema.js';

export interface ResumePoint {
  dir: string;
  state: RunState;
  /** Fixtures that reached a final verdict: kept as they are. */
  kept: Map<string, FixtureResult>;
  /** The fixture hash each transcript recorded, to refuse resuming over changed fixtures. */
  recordedHashes: Map<string, string>;
}

/** The last `result` record and the recorded fixture hash of one fixture's JSONL (torn lines skipped). */
async function readFixtureTranscript(file: string): Promise<{ result?: FixtureResult; sha?: string }> {
  const text = await readFile(file, 'utf8').catch(() => '');
  const out: { result?: FixtureResult; sha?: string } = {};
  for (const line of text.split('\n')) {
    if (!line.trim()) continue;
    let rec: { type?: string; fixtureSha256?: string; result?: unknown };
    try {
      rec = JSON.parse(line) as typeof rec;
    } catch {
      continue; // a line torn by kill -9: that fixture simply is not finished
    }
    if (rec.type === 'fixture' && rec.fixtureSha256) out.sha = rec.fixtureSha256;
    if (rec.type === 'result') {
      const r = FixtureResultSchema.safeParse(rec.result);
      if (r.success) out.result = r.data;
    }
  }
  return out;
}

/** Reads what an interrupted (or killed) run left: run.json and each fixture's final result. */
export async function loadResumePoint(transcriptsDir: string, runId: string): Promise<ResumePoint> {
  const dir = path.join(transcriptsDir, runId);
  const raw = await readFile(path.join(dir, 'run.json'), 'utf8').catch(() => null);
  if (raw === null)
    throw new RedgreenError(
      'USAGE',
      `no run to resume at ${dir}`,
      'pass the run id printed by the interrupted run (a folder of transcripts/)',
    );
  let json: { schema?: unknown };
  try {
    json = JSON.parse(raw) as { schema?: unknown };
  } catch (e) {
    throw new RedgreenError('USAGE', `${dir}/run.json is not valid JSON (${jsonProblem(raw, e)})`);
  }
  if (json.schema !== RUN_SCHEMA) {
    throw new RedgreenError('USAGE', `${dir}/run.json has schema ${JSON.stringify(json.schema)}; this redgreen resumes ${RUN_SCHEMA} only`);
  }
  const state = RunStateSchema.parse(json);
  const kept = new Map<string, FixtureResult>();
  const recordedHashes = new Map<string, string>();
  for (const [id, f] of Object.entries(state.fixtures)) {
    const t = await readFixtureTranscript(path.join(dir, f.transcript));
    if (t.sha) recordedHashes.set(id, t.sha);
    if (t.result && t.result.verdict !== 'infra_error') kept.set(id, t.result);
  }
  return { dir, state, kept, recordedHashes };
}

/** Moves the transcript of an unfinished attempt aside, so the rerun starts a clean one. */
export async function setAsideAttempt(dir: string, fixtureId: string, stamp: number): Promise<void> {
  await rename(path.join(dir, `${fixtureId}.jsonl`), path.join(dir, `${fixtureId}.interrupted-${stamp}.jsonl`)).catch(() => undefined);
}
