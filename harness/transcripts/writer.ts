import { appendFile, mkdir, rename, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { FixtureEvent, RunObserver } from '../pipeline/events.js';
import type { FixtureResult } from '../pipeline/result.js';
import { RUN_SCHEMA, type RunState } from './schema.js';

/** Writes `content` so that readers see the old file or the new one, never half of either. */
export async function writeAtomic(file: string, content: string): Promise<void> {
  const tmp = `${file}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
  await writeFile(tmp, content);
  await rename(tmp, file);
}

/**
 * transcripts/<run-id>/: run.json (replaced atomically on every change) and one append-only
 * JSONL file per fixture. Appends for one fixture are chained so lines never interleave.
 */
export class TranscriptWriter implements RunObserver {
  private readonly chains = new Map<string, Promise<void>>();
  private runJson: Promise<void> = Promise.resolve();
  private readonly t0 = performance.now();

  private constructor(
    readonly dir: string,
    private readonly state: RunState,
  ) {}

  /** Continues a run's transcript folder (resume): same run id, same run.json, status running again. */
  static async reopen(dir: string, state: RunState): Promise<TranscriptWriter> {
    const w = new TranscriptWriter(dir, { ...state, status: 'running' });
    await w.saveRun();
    return w;
  }

  static async open(root: string, init: Pick<RunState, 'runId' | 'mode' | 'backend' | 'options'> & { fixtureIds: string[]; version: string }): Promise<TranscriptWriter> {
    const dir = path.join(root, init.runId);
    await mkdir(dir, { recursive: true });
    const now = new Date().toISOString();
    const state: RunState = {
      schema: RUN_SCHEMA,
      runId: init.runId,
      mode: init.mode,
      status: 'running',
      startedAt: now,
      updatedAt: now,
      backend: init.backend,
      options: init.options,
      harness: { version: init.version, node: process.version, platform: `${os.platform()}-${os.arch()}` },
      fixtures: Object.fromEntries(init.fixtureIds.map((id) => [id, { status: 'pending' as const, transcript: `${id}.jsonl` }])),
    };
    const w = new TranscriptWriter(dir, state);
    await w.saveRun();
    return w;
  }

  private saveRun(): Promise<void> {
    this.state.updatedAt = new Date().toISOString();
    const snapshot = JSON.stringify(this.state, null, 2);
    this.runJson = this.runJson.then(() => writeAtomic(path.join(this.dir, 'run.json'), snapshot));
    return this.runJson;
  }

  private append(fixtureId: string, record: Record<string, unknown>): Promise<void> {
    const line = `${JSON.stringify({ t: Math.round(performance.now() - this.t0), ...record })}\n`;
    const file = path.join(this.dir, `${fixtureId}.jsonl`);
    const next = (this.chains.get(fixtureId) ?? Promise.resolve()).then(() => appendFile(file, line));
    this.chains.set(fixtureId, next);
    return next;
  }

  onFixtureStart(fixtureId: string): void {
    const f = this.state.fixtures[fixtureId];
    if (f) f.status = 'running';
    void this.saveRun();
  }

  onEvent(fixtureId: string, event: FixtureEvent): void {
    void this.append(fixtureId, { ts: new Date().toISOString(), ...event });
  }

  async onFixtureEnd(fixtureId: string, result: FixtureResult): Promise<void> {
    await this.append(fixtureId, { ts: new Date().toISOString(), type: 'result', result });
    const f = this.state.fixtures[fixtureId];
    if (f) Object.assign(f, { status: 'done', verdict: result.verdict });
    await this.saveRun();
  }

  async close(status: RunState['status'], unfinished: string[] = []): Promise<void> {
    for (const id of unfinished) {
      const f = this.state.fixtures[id];
      if (f) f.status = 'unfinished';
    }
    this.state.status = status;
    await Promise.all(this.chains.values());
    await this.saveRun();
  }
}
