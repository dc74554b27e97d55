import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { PidWindow } from '../../harness/sandbox/host/pid-clock.js';

describe('PidWindow', () => {
  it('covers every pid handed out after it opened, and nothing once closed', () => {
    const window = PidWindow.open();
    expect(window).not.toBeNull();
    const pids = Array.from({ length: 3 }, () => spawnSync('sh', ['-c', 'echo $$'], { encoding: 'utf8' }).stdout.trim()).map(Number);
    const r = window!.range()!;
    expect(r).not.toBeNull();
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
