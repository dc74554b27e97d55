import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { PidsAfterExit, PidWindow } from '../../harness/sandbox/host/pid-clock.js';

/**
 * The clock looks at the counter inside open(), range() and ours; each look happens between the
 * times taken just before and just after that call. So the clock's largest gap between two looks
 * lies between `least` and `most` below. On a busy machine a process can wait many milliseconds
 * between any two lines, so the test knows the gap only within these bounds, not to the millisecond.
 */
function lookTimes() {
  let prev: { before: number; after: number } | null = null;
  const gaps = { least: 0, most: 0 };
  return {
    gaps,
    look<T>(call: () => T): T {
      const before = performance.now();
      const value = call();
      const after = performance.now();
      if (prev) {
        gaps.least = Math.max(gaps.least, before - prev.after);
        gaps.most = Math.max(gaps.most, after - prev.before);
      }
      prev = { before, after };
      return value;
    },
  };
}

const wrapMs = Number(readFileSync('/proc/sys/kernel/pid_max', 'latin1')) / 1000;

/** The clock kept sight when every gap was under the limit, lost it when one was over; within the bounds' spread, either is right. */
function expectSight(kept: boolean, gaps: { least: number; most: number }): void {
  const why = `gap between looks ${gaps.least.toFixed(1)}-${gaps.most.toFixed(1)} ms, limit ${wrapMs} ms`;
  if (gaps.most < wrapMs) expect(kept, `kept sight: ${why}`).toBe(true);
  if (gaps.least >= wrapMs) expect(kept, `kept sight: ${why}`).toBe(false);
}

const shPid = () => Number(spawnSync('sh', ['-c', 'echo $$'], { encoding: 'utf8' }).stdout.trim());

describe('PidWindow', () => {
  // The clock may not lose sight of the counter for pid_max / 1000 ms (pid-clock.ts): 33 ms where
  // pid_max is 32768. A look that comes later spends the window, and its kill scans everything.
  // spawnSync holds the event loop (no look of the clock's timer meanwhile), so the gaps between
  // this test's own looks are the clock's, and say which outcome is right on a busy machine too.
  it('covers every pid handed out after it opened while the clock kept sight of the counter, and nothing once closed; lost sight, it says so', () => {
    const times = lookTimes();
    const window = times.look(() => PidWindow.open());
    expect(window).not.toBeNull();
    const pids: number[] = [];
    let r: ReturnType<PidWindow['range']> = null;
    for (let i = 0; i < 3; i++) {
      pids.push(shPid());
      r = times.look(() => window!.range());
    }
    expectSight(r !== null, times.gaps);
    if (r)
      for (const pid of pids) {
        const inside = r.wrapped ? pid > r.after || pid <= r.last : pid > r.after && pid <= r.last;
        expect(inside, `pid ${pid} in ${JSON.stringify(r)}`).toBe(true);
      }
    window!.close();
    expect(window!.range()).toBeNull();
  });

  it('a window opened later starts after the pids handed out before it', () => {
    const before = shPid();
    const times = lookTimes();
    const window = times.look(() => PidWindow.open())!;
    try {
      const r = times.look(() => window.range());
      expectSight(r !== null, times.gaps);
      const inside = r && (r.wrapped ? before > r.after || before <= r.last : before > r.after && before <= r.last);
      expect(inside, `pid ${before} outside ${JSON.stringify(r)}`).toBeFalsy();
    } finally {
      window.close();
    }
  });
});

describe('PidsAfterExit', () => {
  it('a command still running, or ended with the pid counter not come round since, owns its pids; lost sight, it does not', () => {
    const after = new PidsAfterExit();
    expect(after.ours).toBe(true);
    const times = lookTimes();
    times.look(() => after.exited());
    shPid();
    const ours = times.look(() => after.ours);
    expectSight(ours, times.gaps);
    after.done();
  });

  // As root: the test moves the kernel's pid counter to just below pid_max (ns_last_pid), so that
  // the next pids wrap round, as they do after a while on a busy machine (pid_max is 32768 here).
  it.skipIf(process.getuid?.() !== 0)("once the counter came round, its pids may be anyone's: none is its own", () => {
    const pidMax = Number(readFileSync('/proc/sys/kernel/pid_max', 'latin1'));
    const after = new PidsAfterExit();
    after.exited();
    let lookedAt = performance.now();
    let gap = 0;
    writeFileSync('/proc/sys/kernel/ns_last_pid', String(pidMax - 3));
    const pids: number[] = [];
    for (let i = 0; i < 6; i++) {
      pids.push(shPid());
      gap = Math.max(gap, performance.now() - lookedAt);
      // A look each time, as the clock's timer would make (spawnSync holds it back).
      expect(typeof after.ours).toBe('boolean');
      lookedAt = performance.now();
    }
    expect(Math.min(...pids), `pids ${pids}`).toBeLessThan(pidMax - 3);
    // Whether the clock kept sight (wrapped) or lost it (gap), nothing is its own any more.
    expect(after.ours, `largest gap between looks ${gap.toFixed(1)} ms (limit ${wrapMs} ms)`).toBe(false);
    after.done();
  });
});
