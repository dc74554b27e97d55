import type { FixtureEvent, RunObserver } from '../pipeline/events.js';
import type { FixtureResult } from '../pipeline/result.js';

const MARK: Record<string, string> = { valid: '✔', resolved: '✔' };

/**
 * Live progress on stderr (stdout stays clean for --json): a throttled status line on a TTY,
 * one line per finished fixture elsewhere.
 */
export class TerminalReporter implements RunObserver {
  private readonly phases = new Map<string, string>();
  private done = 0;
  private lastDraw = 0;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly total: number,
    private readonly out: NodeJS.WriteStream = process.stderr,
    private readonly tty = Boolean(process.stderr.isTTY) && !process.env.CI,
  ) {}

  onFixtureStart(id: string): void {
    this.phases.set(id, 'start');
    this.draw();
  }

  onEvent(id: string, event: FixtureEvent): void {
    if (event.type === 'phase' && event.status === 'start') {
      this.phases.set(id, event.phase);
      this.draw();
    }
  }

  onFixtureEnd(id: string, r: FixtureResult): void {
    this.phases.delete(id);
    this.done++;
    const line = `${MARK[r.verdict] ?? '✘'} ${r.fixtureId}  ${r.verdict}  ${(r.durationMs / 1000).toFixed(2)}s  ${r.reason}`;
    if (this.tty) this.out.write(`\r\x1b[K${line}\n`);
    else this.out.write(`${line}\n`);
    this.draw(true);
  }

  private draw(force = false): void {
    if (!this.tty) return;
    const now = Date.now();
    if (!force && now - this.lastDraw < 100) {
      this.timer ??= setTimeout(() => {
        this.timer = undefined;
        this.draw(true);
      }, 100);
      return;
    }
    this.lastDraw = now;
    const running = [...this.phases].map(([id, p]) => `${id} (${p})`).join(', ');
    const width = this.out.columns ?? 100;
    this.out.write(`\r\x1b[K${`[${this.done}/${this.total}] ${running}`.slice(0, width - 1)}`);
  }

  close(): void {
    clearTimeout(this.timer);
    if (this.tty) this.out.write('\r\x1b[K');
  }
}
