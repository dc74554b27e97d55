import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { PidsAfterExit, PidWindow } from '../../harness/sandbox/host/pid-clock.js';

describe('PidWindow', () => {
  // The clock may not lose sight of the counter for pid_max / 1000 ms (pid-clock.ts): 33 ms where
  // pid_max is 32768. A look that comes later spends the window, and its kill scans everything.
  // spawnSync holds the event loop (no look of the clock's timer meanwhile), so the gaps between
  // this test's own looks are the clock's, and say which outcome is right on a busy machine too.
  it('covers every pid handed out after it opened while the clock kept sight of the counter, and nothing once closed; lost sight, it says so', () => {
    const wrapMs = Number(readFileSync('/proc/sys/kernel/pid_max', 'latin1')) / 1000;
    const window = PidWindow.open();
    expect(window).not.toBeNull();
    const pids: number[] = [];
    let lookedAt = performance.now();
    let gap = 0;
    let r: ReturnType<PidWindow['range']> = null;
    for (let i = 0; i < 3; i++) {
      pids.push(Number(spawnSync('sh', ['-c', 'echo $$'], { encoding: 'utf8' }).stdout.trim()));
      const now = performance.now();
      gap = Math.max(gap, now - lookedAt);
      r = window!.range();
      lookedAt = performance.now();
    }
    // Within a millisecond of the limit, either outcome is right.
    if (gap > wrapMs + 1) expect(r).toBeNull();
    if (gap < wrapMs - 1) expect(r, `largest gap between looks ${gap.toFixed(1)} ms`).not.toBeNull();
    if (r)
      for (const pid of pids) {
        const inside = r.wrapped ? pid > r.after || pid <= r.last : pid > r.after && pid <= r.last;
        expect(inside, `pid ${pid} in ${JSON.stringify(r)}`).toBe(true);
      }
    window!.close();
    expect(window!.range()).toBeNull();
  });

  it('a window opened later starts after the pids handed out before it', () => {
    const before = Number(spawnSync('sh', ['-c', 'echo $$'], { encoding: 'utf8' }).stdout.trim());
    const window = PidWindow.open()!;
    try {
      const r = window.range()!;
      const inside = r.wrapped ? before > r.after || before <= r.last : before > r.after && before <= r.last;
      expect(inside, `pid ${before} outside ${JSON.stringify(r)}`).toBe(false);
    } finally {
      window.close();
    }
  });
});

describe('PidsAfterExit', () => {
  const shPid = () => Number(spawnSync('sh', ['-c', 'echo $$'], { encoding: 'utf8' }).stdout.trim());

  it('a command still running, or ended with the pid counter not come round since, owns its pids', () => {
    const after = new PidsAfterExit();
    expect(after.ours).toBe(true);
    after.exited();
    shPid();
    expect(after.ours).toBe(true);
    after.done();
  });

  // As root: the test moves the kernel's pid counter to just below pid_max (ns_last_pid), so that
  // the next pids wrap round, as they do after a while on a busy machine (pid_max is 32768 here).
  it.skipIf(process.getuid?.() !== 0)("once the counter came round, its pids may be anyone's: none is its own", () => {
    const wrapMs = Number(readFileSync('/proc/sys/kernel/pid_max', 'latin1')) / 1000;
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
