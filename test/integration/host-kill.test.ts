import { spawn } from 'node:child_process';
import { describe, expect, test } from 'vitest';
import { suiteSandbox } from '../helpers/suite-sandbox.js';
import { LocalBackend } from '../../harness/sandbox/host/local.js';
import { processesWith, uniqueSleep } from '../helpers/procs.js';

// The local backend finds a command's processes by the marker in their environment, among the
// pids handed out while it ran. These are the processes of that window that are not its own.
describe('local kill: what it leaves alone', () => {
  const backend = new LocalBackend();
  const sb = suiteSandbox(backend, 'host-kill');

  test('a process with no environment, started elsewhere while a command runs, outlives the command', async () => {
    const [mine, theirs] = [uniqueSleep(), uniqueSleep()];
    let other: ReturnType<typeof spawn> | undefined;
    try {
      const ran = sb().exec(`setsid sleep ${mine} & sleep 0.5; echo done`);
      // Started by the test, not the sandbox, inside the command's pid window: `env -i` leaves it
      // with an empty environment, which the kill must tell from one caught inside an exec.
      other = spawn('env', ['-i', 'sleep', theirs], { stdio: 'ignore', detached: true });
      const r = await ran;
      expect(r.stdout).toBe('done\n');
      expect(processesWith(mine)).toEqual([]);
      expect(processesWith(theirs)).toHaveLength(1);
    } finally {
      other?.kill('SIGKILL');
    }
  });

  test('a process left in a session of its own with an environment bigger than a read of it is found by its marker and killed', async () => {
    const t = uniqueSleep();
    // 100 KB before the markers: its environment is read past its first 64 KB. Half a second for
    // it to leave the server's group (setsid), where it would be killed as a member.
    const r = await sb().exec(
      `env -i BIG=$(head -c 100000 /dev/zero | tr '\\0' a) REDGREEN_SANDBOX="$REDGREEN_SANDBOX" REDGREEN_EXEC="$REDGREEN_EXEC" setsid sleep ${t} >/dev/null 2>&1 & sleep 0.5; echo left`,
    );
    expect(r.stdout).toBe('left\n');
    expect(processesWith(t)).toEqual([]);
  });
});

describe("local kill: the backend's close", () => {
  test("kills what a sandbox's commands left that their own kills missed, and no other folder's processes", async () => {
    const backend = new LocalBackend();
    const [missed, others] = [uniqueSleep(), uniqueSleep()];
    const started: ReturnType<typeof spawn>[] = [];
    // Started by the test, not by a command: no command's kill looks for them.
    const leave = (sandboxId: string, t: string) =>
      started.push(spawn('sleep', [t], { stdio: 'ignore', detached: true, env: { REDGREEN_SANDBOX: sandboxId } }));
    try {
      await backend.open();
      const sb = await backend.create({ runId: 'host-kill-close', fixtureId: 'close' });
      leave(sb.id, missed);
      // Another folder's sandbox (its name ours with one more letter): left alone.
      leave(`${sb.id.slice(0, sb.id.lastIndexOf('-'))}x-0000`, others);
      await sb.destroy();
      expect(processesWith(missed)).toHaveLength(1);
      await backend.close();
      expect(processesWith(missed)).toEqual([]);
      expect(processesWith(others)).toHaveLength(1);
    } finally {
      for (const p of started) p.kill('SIGKILL');
      await backend.close();
    }
  });
});
