import type { FixtureEvent } from '../pipeline/events.js';
import type { FixtureResult } from '../pipeline/result.js';
import { EXPECTED } from '../scoring/verdicts.js';
import { LiveRegion, paint, type Paint } from './progress-live.js';
import type { Reporter, RunInfo } from './reporter.js';

/** "1m05s", "12.4s": elapsed times a person reads at a glance. */
export function clock(ms: number): string {
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)}s`;
  const s = Math.round(ms / 1000);
  return s < 3600
    ? `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`
    : `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`;
}

export interface ProgressOptions {
  out?: NodeJS.WriteStream;
  /** Live lines redrawn in place (a terminal), or one line per event that matters (a pipe, a CI log). */
  live?: boolean;
  color?: boolean;
  /** Off a TTY, a line saying what is running when nothing has finished for this long. */
  heartbeatMs?: number;
}

interface Running {
  phase: string;
  phaseSince: number;
  since: number;
}

/**
 * Progress on stderr (stdout stays for the table or the JSON). On a TTY: live lines with the
 * elapsed time, each running fixture's phase and time in it, done/total and an ETA. Elsewhere
 * (a pipe, CI): a start line, one line per finished fixture, and a heartbeat while nothing finishes.
 */
export class ProgressReporter implements Reporter {
  private readonly out: NodeJS.WriteStream;
  private readonly live: LiveRegion | null;
  private readonly paint: Paint;
  private readonly heartbeatMs: number;
  private run: RunInfo | null = null;
  private readonly running = new Map<string, Running>();
  private done = 0;
  private missed = 0;
  private started = 0;
  private heartbeat: NodeJS.Timeout | undefined;

  constructor(options: ProgressOptions = {}) {
    this.out = options.out ?? process.stderr;
    const live = options.live ?? (Boolean(this.out.isTTY) && !process.env.CI);
    this.paint = paint(options.color ?? (live && !process.env.NO_COLOR));
    this.live = live ? new LiveRegion(this.out, () => this.status()) : null;
    this.heartbeatMs = options.heartbeatMs ?? (Number(process.env.REDGREEN_HEARTBEAT_SEC) * 1000 || 30_000);
  }

  onRunStart(run: RunInfo): void {
    this.run = run;
    this.running.clear();
    this.done = 0;
    this.missed = 0;
    this.started = Date.now();
    const extra = [run.model ? `model ${run.model}` : '', run.shard ? `shard ${run.shard.index}/${run.shard.count}` : ''].filter(Boolean);
    const where = `on ${run.backend}, concurrency ${run.concurrency}${extra.length ? `, ${extra.join(', ')}` : ''}`;
    this.print(
      run.kept
        ? `resuming ${run.runId}: ${run.kept} fixture(s) kept, ${run.total} to run (${run.mode} ${where})`
        : `redgreen ${run.mode}: ${run.total} fixture(s) ${where} (run ${run.runId})`,
    );
    this.live?.start();
    this.armHeartbeat();
  }

  onFixtureStart(_run: RunInfo, id: string): void {
    const now = Date.now();
    this.running.set(id, { phase: 'starting', phaseSince: now, since: now });
    this.live?.changed();
  }

  onFixtureEvent(_run: RunInfo, id: string, event: FixtureEvent): void {
    const r = this.running.get(id);
    if (r && event.type === 'phase' && event.status === 'start') {
      r.phase = event.phase;
      r.phaseSince = Date.now();
      this.live?.changed();
    }
  }

  onFixtureEnd(run: RunInfo, r: FixtureResult): void {
    this.running.delete(r.fixtureId);
    this.done++;
    const ok = EXPECTED.has(r.verdict);
    if (!ok) this.missed++;
    const mark = ok ? this.paint.green('✔') : this.paint.red('✘');
    const who = run.model ? `[${run.model}] ` : '';
    this.print(
      `${mark} ${who}${r.fixtureId}  ${ok ? this.paint.green(r.verdict) : this.paint.red(r.verdict)}  ${(r.durationMs / 1000).toFixed(2)}s  ${r.reason}  ${this.paint.dim(`[${this.done}/${run.total}]`)}`,
    );
    this.armHeartbeat();
  }

  onRunEnd(): void {
    this.live?.stop();
    clearTimeout(this.heartbeat);
  }

  onLog(message: string, level: 'info' | 'warning'): void {
    this.print(level === 'warning' ? `warning: ${message}` : message);
  }

  close(): void {
    this.live?.stop();
    clearTimeout(this.heartbeat);
  }

  /** A permanent line, above the live ones on a TTY. */
  private print(line: string): void {
    if (this.live) this.live.print(line);
    else this.out.write(`${line}\n`);
  }

  private armHeartbeat(): void {
    if (this.live) return;
    clearTimeout(this.heartbeat);
    this.heartbeat = setTimeout(() => {
      this.print(`… ${this.status()[0]}`);
      this.armHeartbeat();
    }, this.heartbeatMs);
    this.heartbeat.unref();
  }

  /** The status line, then one line per running fixture with its phase and time in it. */
  private status(): string[] {
    const run = this.run;
    if (!run) return [];
    const now = Date.now();
    const elapsed = now - this.started;
    // Fixtures finish at the rate seen so far; the ones left share the same slots.
    const eta = this.done && this.done < run.total ? ` · ETA ~${clock(((run.total - this.done) * elapsed) / this.done)}` : '';
    const missed = this.missed ? ` · ${this.paint.red(`${this.missed} missed`)}` : '';
    const head = `${this.done}/${run.total} done${missed} · ${clock(elapsed)} elapsed${eta}${run.model ? ` · ${run.model}` : ''}`;
    const rows = [...this.running].map(([id, r]) => ({ id, text: `${r.phase} ${clock(now - r.phaseSince)}`, total: clock(now - r.since) }));
    if (!this.live) return [`${head}; running: ${rows.map((r) => `${r.id} (${r.text})`).join(', ') || 'nothing'}`];
    const width = Math.max(...rows.map((r) => r.id.length), 0);
    return [
      head,
      ...rows.map((r) => `  ${this.paint.cyan('▸')} ${r.id.padEnd(width)}  ${this.paint.bold(r.text)}  ${this.paint.dim(`(${r.total})`)}`),
    ];
  }
}
