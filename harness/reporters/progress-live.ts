import { stripAnsi } from '../errors.js';

/** ANSI colours, or none (NO_COLOR, a pipe). */
export interface Paint {
  green(s: string): string;
  red(s: string): string;
  cyan(s: string): string;
  dim(s: string): string;
  bold(s: string): string;
}

export function paint(on: boolean): Paint {
  const c = (open: number, close: number) => (s: string) => (on ? `\x1b[${open}m${s}\x1b[${close}m` : s);
  return { green: c(32, 39), red: c(31, 39), cyan: c(36, 39), dim: c(2, 22), bold: c(1, 22) };
}

/** Cuts a line to the terminal's width, counting only what is visible (colour codes are kept). */
function fit(line: string, width: number): string {
  if (stripAnsi(line).length <= width) return line;
  let visible = 0;
  let out = '';
  for (const part of line.split(/(\x1b\[[0-9;]*m)/)) {
    if (part.startsWith('\x1b[')) out += part;
    else {
      const room = width - 1 - visible;
      if (room <= 0) continue;
      out += part.slice(0, room);
      visible += Math.min(part.length, room);
    }
  }
  return `${out}…\x1b[0m`;
}

/**
 * Lines at the bottom of a terminal, redrawn in place: at most every 100 ms when something
 * changes, and every second anyway so elapsed times move. Permanent lines go above them.
 */
export class LiveRegion {
  private drawn = 0;
  private last = 0;
  private pending: NodeJS.Timeout | undefined;
  private tick: NodeJS.Timeout | undefined;

  constructor(
    private readonly out: NodeJS.WriteStream,
    private readonly lines: () => string[],
  ) {}

  start(): void {
    this.draw();
    clearInterval(this.tick);
    this.tick = setInterval(() => this.draw(), 1000);
    this.tick.unref();
  }

  /** Something changed: redraw soon, not more often than every 100 ms. */
  changed(): void {
    if (this.pending || !this.tick) return;
    const wait = Math.max(0, 100 - (Date.now() - this.last));
    this.pending = setTimeout(() => {
      this.pending = undefined;
      this.draw();
    }, wait);
    this.pending.unref();
  }

  print(line: string): void {
    this.out.write(`${this.clear()}${line}\n`);
    this.drawn = 0;
    if (this.tick) this.draw();
  }

  stop(): void {
    clearInterval(this.tick);
    clearTimeout(this.pending);
    this.tick = undefined;
    this.pending = undefined;
    this.out.write(this.clear());
    this.drawn = 0;
  }

  /** Moves to the first live line and clears from there down. */
  private clear(): string {
    if (!this.drawn) return '\r\x1b[J';
    return `${this.drawn > 1 ? `\x1b[${this.drawn - 1}A` : ''}\r\x1b[J`;
  }

  private draw(): void {
    this.last = Date.now();
    const width = Math.max(20, (this.out.columns || 100) - 1);
    const rows = Math.max(2, (this.out.rows || 24) - 2);
    let lines = this.lines().map((l) => fit(l, width));
    if (lines.length > rows) lines = [...lines.slice(0, rows - 1), `  … ${lines.length - rows + 1} more running`];
    this.out.write(`${this.clear()}${lines.join('\n')}`);
    this.drawn = lines.length;
  }
}
