import { openSync, readFileSync, readlinkSync, readSync } from 'node:fs';

/**
 * The kernel hands pids out in increasing order, wrapping at pid_max, so everything a command
 * started has a pid handed out after the last one before it started. A kill that reads only
 * those pids' environments costs what the command made, not every process of the machine.
 *
 * The counter (/proc/loadavg's last pid) is watched by one clock for the whole process while any
 * command runs, often enough that it cannot come all the way round between two looks: fewer than
 * a million pids a second can be handed out (a fork alone costs tens of microseconds, and the pid
 * allocator is one lock). A window that the clock lost sight of (a look came late, the counter
 * went all the way round) is spent, and its kill scans every process.
 */

/** Pids below this are never handed out again after the counter wraps (the kernel's RESERVED_PIDS). */
const RESERVED_PIDS = 300;

const loadavg = (() => {
  try {
    // Held open and read at offset 0: one syscall a look, not an open, a read and a close.
    const fd = openSync('/proc/loadavg', 'r');
    const buf = Buffer.alloc(256);
    return () => {
      const n = readSync(fd, buf, 0, buf.length, 0);
      // "0.42 0.51 0.60 2/95 28513\n": the last pid handed out is the last word.
      const line = buf.toString('latin1', 0, n).trimEnd();
      const last = Number(line.slice(line.lastIndexOf(' ') + 1));
      return Number.isInteger(last) && last > 0 ? last : null;
    };
  } catch {
    return () => null;
  }
})();

/** Whether /proc lists this process's pid namespace (loadavg counts in the reader's, the listing in the mount's), and pid_max. */
const PROC = (() => {
  try {
    const pidMax = Number(readFileSync('/proc/sys/kernel/pid_max', 'latin1').trim());
    const usable = Number(readlinkSync('/proc/self')) === process.pid && loadavg() !== null && Number.isInteger(pidMax);
    return { usable, pidMax, wrapMs: pidMax / 1000 };
  } catch {
    return { usable: false, pidMax: 0, wrapMs: 0 };
  }
})();

/** The one watcher of the pid counter. */
const clock = {
  /** Pids handed out since the clock started: the sum of the counter's steps between looks. */
  total: 0,
  last: 0,
  lastAt: 0,
  /** When the clock last lost sight of the counter (a look too late): windows open then are spent. */
  blindAt: -Infinity,
  watchers: 0,
  timer: null as NodeJS.Timeout | null,
  /** When the timer was last set going (started or refreshed). */
  refreshedAt: 0,

  look(): boolean {
    const now = performance.now();
    const cur = loadavg();
    if (cur === null) return false;
    if (this.watchers > 0 && now - this.lastAt >= PROC.wrapMs) this.blindAt = this.lastAt;
    else this.total += cur >= this.last ? cur - this.last : PROC.pidMax - this.last + (cur - RESERVED_PIDS);
    this.last = cur;
    this.lastAt = now;
    // The timer's look is due half of wrapMs after a recent look, whoever made it: a command shorter
    // than that needs no look but its window's own (its open and its range), and a timer that comes
    // late still has the other half before the clock loses sight. Moved at most every quarter of
    // wrapMs: a refresh costs more than the look, and busy runs look every few milliseconds.
    if (this.timer && now - this.refreshedAt >= PROC.wrapMs / 4) {
      this.timer.refresh();
      this.refreshedAt = now;
    }
    return true;
  },

  watch(): void {
    if (this.watchers++ > 0) return;
    this.timer = setInterval(() => this.look(), PROC.wrapMs / 2);
    this.timer.unref();
    this.refreshedAt = performance.now();
  },

  unwatch(): void {
    if (--this.watchers > 0) return;
    clearInterval(this.timer!);
    this.timer = null;
  },
};

/** Which pids a command may have created: opened just before it starts, closed when it is done. */
export class PidWindow {
  private closed = false;

  private constructor(
    /** The last pid handed out before the command started. */
    readonly after: number,
    private readonly total0: number,
    private readonly openedAt: number,
  ) {}

  /** Null where pids cannot be bounded (no /proc, another pid namespace): every kill then scans everything. */
  static open(): PidWindow | null {
    if (!PROC.usable || !clock.look()) return null;
    clock.watch();
    return new PidWindow(clock.last, clock.total, clock.lastAt);
  }

  /**
   * The range of pids handed out since the window opened, or null when it cannot tell. `wrapped`:
   * the counter passed pid_max, so the range is (after, pid_max) and [300, last].
   */
  range(): { after: number; last: number; wrapped: boolean } | null {
    if (this.closed || !clock.look() || clock.blindAt >= this.openedAt) return null;
    const advanced = clock.total - this.total0;
    if (advanced >= PROC.pidMax - RESERVED_PIDS) return null;
    return { after: this.after, last: clock.last, wrapped: advanced >= PROC.pidMax - this.after };
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    clock.unwatch();
  }
}

/**
 * The pids of a host command that ended (a command server and what it ran): from its exit on, the
 * numbers it held are freed as their last user goes, and the kernel hands one out again only after
 * the counter has come all the way round. Until then a signal to them can reach nothing but what
 * is left of that command; after, maybe a stranger.
 */
export class PidsAfterExit {
  /** Opened at the exit (undefined while it runs; null where pids cannot be counted). */
  private window?: PidWindow | null;

  /** The command exited (call at once: the count starts here). */
  exited(): void {
    this.window ??= PidWindow.open();
  }

  /** Whether its pids and groups are still its own to signal. */
  get ours(): boolean {
    if (this.window === undefined) return true;
    const r = this.window?.range();
    return !!r && !r.wrapped;
  }

  /** Nothing more will be signalled: the clock may stop counting for it. */
  done(): void {
    this.window?.close();
  }
}
