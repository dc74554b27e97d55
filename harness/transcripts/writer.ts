import { closeSync, openSync, writeSync } from 'node:fs';
import { mkdir, rename, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describeError, RedgreenError } from '../errors.js';
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
 * How often run.json follows the fixtures' progress at most: once a second, and for a big run once
 * every RUN_JSON_MS_PER_FIXTURE per fixture (a 1,000-fixture run every 5 s). Resuming reads each
 * fixture's result from its own transcript, so run.json's per-fixture status only informs. Each
 * write is the whole run's state in a new file, so at a fixed rate its cost would grow with the
 * square of the run's size (10,000 fixtures: 1 MB a second); spaced by the size, it grows with the
 * run's size, as everything else a fixture costs.
 */
const RUN_JSON_EVERY_MS = 1000;
const RUN_JSON_MS_PER_FIXTURE = 5;

export function runJsonInterval(fixtures: number): number {
  return Math.max(RUN_JSON_EVERY_MS, fixtures * RUN_JSON_MS_PER_FIXTURE);
}

/**
 * How long a fixture's lines may wait to go out together: a phase's end and the next one's start,
 * a small fixture's whole start up to its first command, in one write(2) instead of one a turn of
 * the event loop (each costs tens of µs on a busy ext4). A `tail -f` sees them at most this late.
 */
export const TRANSCRIPT_WRITE_DELAY_MS = 20;

/**
 * transcripts/<run-id>/: run.json (replaced atomically, at most every runJsonInterval and at the end) and
 * one append-only JSONL file per fixture. Each fixture's file is held open while it runs, and the
 * lines a fixture emits within TRANSCRIPT_WRITE_DELAY_MS go out in one write(2): lines never
 * interleave, a kill -9 loses at most those lines, and thousands of small fixtures pay no
 * open/close or write per event. Its result line is written before its file closes, at the
 * fixture's end.
 */
export class TranscriptWriter implements RunObserver {
  private readonly files = new Map<string, number>();
  /** Lines emitted since the last write, per fixture. */
  private readonly pending = new Map<string, string[]>();
  private writing: NodeJS.Timeout | null = null;
  private readonly t0 = performance.now();
  /** The save in flight, and whether the state changed since it started. */
  private saving: Promise<void> | null = null;
  private dirty = false;
  private timer: NodeJS.Timeout | null = null;
  /** The first write that failed: the run is told at close (a lost transcript is not a fixture's fault). */
  private failure: unknown = null;

  /** How long run.json may lag behind the fixtures (runJsonInterval of the run's size). */
  private readonly every: number;

  private constructor(
    readonly dir: string,
    private readonly state: RunState,
  ) {
    this.every = runJsonInterval(Object.keys(state.fixtures).length);
  }

  /** Continues a run's transcript folder (resume): same run id, same run.json, status running again. */
  static async reopen(dir: string, state: RunState): Promise<TranscriptWriter> {
    const w = new TranscriptWriter(dir, { ...state, status: 'running' });
    await w.flush();
    return w;
  }

  static async open(
    root: string,
    init: Pick<RunState, 'runId' | 'mode' | 'backend' | 'options'> & { fixtureIds: string[]; version: string },
  ): Promise<TranscriptWriter> {
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
    await w.flush();
    return w;
  }

  /** Writes run.json now (after any save in flight). */
  private async flush(): Promise<void> {
    while (this.saving) await this.saving;
    this.state.updatedAt = new Date().toISOString();
    this.dirty = false;
    this.saving = writeAtomic(path.join(this.dir, 'run.json'), JSON.stringify(this.state, null, 2)).finally(() => (this.saving = null));
    await this.saving;
  }

  /** A change to run.json, written within `every`. */
  private changed(): void {
    this.dirty = true;
    if (this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      if (this.dirty) this.flush().catch((e: unknown) => (this.failure ??= e));
    }, this.every);
    this.timer.unref();
  }

  /** The ISO time of the millisecond `isoMs`: events of one moment share it, made once. */
  private iso = '';
  private isoMs = -1;

  /**
   * A line of the fixture's file: its time on the run's clock and the wall clock's, then `record`'s
   * fields (none of them named t or ts), joined as text: no copy of the record to stringify.
   */
  private append(fixtureId: string, record: object): void {
    const ms = Date.now();
    if (ms !== this.isoMs) {
      this.isoMs = ms;
      this.iso = new Date(ms).toISOString();
    }
    const fields = JSON.stringify(record);
    const line = `{"t":${Math.round(performance.now() - this.t0)},"ts":"${this.iso}"${fields.length > 2 ? `,${fields.slice(1)}` : '}'}\n`;
    const lines = this.pending.get(fixtureId);
    if (lines) lines.push(line);
    else this.pending.set(fixtureId, [line]);
    if (this.writing) return;
    this.writing = setTimeout(() => {
      this.writing = null;
      for (const id of [...this.pending.keys()]) this.writeLines(id);
    }, TRANSCRIPT_WRITE_DELAY_MS);
    // The run's end (close) writes what is left: the timer alone keeps no process alive.
    this.writing.unref();
  }

  /** A fixture's pending lines, in one write. */
  private writeLines(fixtureId: string): void {
    const lines = this.pending.get(fixtureId);
    if (!lines) return;
    this.pending.delete(fixtureId);
    try {
      let fd = this.files.get(fixtureId);
      if (fd === undefined) this.files.set(fixtureId, (fd = openSync(path.join(this.dir, `${fixtureId}.jsonl`), 'a')));
      writeSync(fd, lines.join(''));
    } catch (e) {
      this.failure ??= e;
    }
  }

  private closeFile(fixtureId: string): void {
    this.writeLines(fixtureId);
    const fd = this.files.get(fixtureId);
    if (fd === undefined) return;
    this.files.delete(fixtureId);
    try {
      closeSync(fd);
    } catch (e) {
      this.failure ??= e;
    }
  }

  onFixtureStart(fixtureId: string): void {
    const f = this.state.fixtures[fixtureId];
    if (f) f.status = 'running';
    this.changed();
  }

  onEvent(fixtureId: string, event: FixtureEvent): void {
    this.append(fixtureId, event);
  }

  async onFixtureEnd(fixtureId: string, result: FixtureResult): Promise<void> {
    this.append(fixtureId, { type: 'result', result });
    this.closeFile(fixtureId);
    const f = this.state.fixtures[fixtureId];
    if (f) Object.assign(f, { status: 'done', verdict: result.verdict });
    this.changed();
  }

  /** The final run.json; fails (after writing what it can) if any transcript write failed. */
  async close(status: RunState['status'], unfinished: string[] = []): Promise<void> {
    for (const id of unfinished) {
      const f = this.state.fixtures[id];
      if (f) f.status = 'unfinished';
    }
    for (const id of new Set([...this.files.keys(), ...this.pending.keys()])) this.closeFile(id);
    if (this.writing) clearTimeout(this.writing);
    this.writing = null;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.state.status = status;
    await this.flush();
    if (this.failure) {
      throw new RedgreenError(
        'TRANSCRIPT_WRITE',
        `the transcript in ${this.dir} is incomplete: ${describeError(this.failure)}`,
        'check that the transcripts folder is writable and its disk has room',
      );
    }
  }
}
