import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, test, vi } from 'vitest';
import { suiteSandbox } from '../helpers/suite-sandbox.js';
import { LocalBackend } from '../../harness/sandbox/host/local.js';
import { CommandServer } from '../../harness/sandbox/core/command-server.js';
import { CommandKill, HostServer, HostServers } from '../../harness/sandbox/host/server.js';
import { commandLine, servedEnvScript, type ServedEnv } from '../../harness/sandbox/host/server-process.js';
import { isRunning, processesWith, uniqueSleep, unclosedHostBackend } from '../helpers/procs.js';

/** Live members of process group `pgid`. */
function groupOf(pgid: number): number[] {
  const found: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'latin1');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(f[2]) === pgid && f[0] !== 'Z') found.push(Number(name));
    } catch {
      // gone
    }
  }
  return found;
}

describe("a server's request line", () => {
  test("over the sandbox's file of variables, a command gets exactly its own: changed, added, dropped, quoted", async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'rg-served-env-'));
    try {
      const vars = { PATH: '/usr/bin:/bin', A: '1', B: "it's", KEEP: 'same', MULTI: 'a\nb', NL: 'not a newline' };
      const base: ServedEnv = { file: path.join(dir, 'env.sh'), vars };
      writeFileSync(base.file, servedEnvScript(base.vars));
      const env = { PATH: '/usr/bin:/bin', A: '2', C: 'x y\nz', KEEP: 'same', MULTI: 'a\nb', NL: 'not a newline' };
      const line = commandLine({ argv: ['env'], env, cwd: dir, base });
      // Only what differs travels in the line: not PATH, not KEEP.
      expect(line).not.toContain('KEEP');
      expect(line).not.toContain('/usr/bin:/bin');
      // As the servers evaluate it: their NL holds a newline.
      const r = spawnSync('/bin/sh', ['-c', `NL='\n'\n${line}`], { env: { PWD: '/', OLDPWD: '/tmp', PATH: '/bin' }, encoding: 'utf8' });
      expect(r.status, r.stderr).toBe(0);
      const seen = Object.fromEntries(
        r.stdout.split(/\n(?=[A-Z]+=)/).map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1).replace(/\n$/, '')]),
      );
      expect(seen).toEqual(env);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

// The local backend's commands go through host command servers (one sh loop per command running
// at once, shared by every sandbox): these are what sharing one brings that the conformance suite
// does not look at.
describe('local command servers', () => {
  const backend = new LocalBackend();
  const sb = suiteSandbox(backend, 'host-server');

  test("a command that removes its sandbox's file of variables does not change the next one's environment", async () => {
    // Each command's own marker aside, the same variables.
    const env = async () => (await sb().exec('env | grep -v ^REDGREEN_EXEC= | sort')).stdout;
    const before = await env();
    expect((await sb().exec('rm "$REDGREEN_WORKSPACE/../env.sh" && echo removed')).stdout).toBe('removed\n');
    expect(await env()).toBe(before);
  });

  test('what a command leaves with a cleared environment in the group it shares with the server is killed', async () => {
    const t = uniqueSleep();
    const r = await sb().exec(`env -i /bin/sh -c 'sleep ${t} >/dev/null 2>&1 &'; echo left`);
    expect(r.stdout).toBe('left\n');
    expect(processesWith(t)).toEqual([]);
  });

  test('a command that signals its own group (`kill 0`) gets the signal, as in a session of its own', async () => {
    const r = await sb().exec('echo before; kill 0; echo after');
    expect(r.exitCode).toBe(143);
    expect(r.stdout).toBe('before\n');
    expect((await sb().exec('echo next')).stdout).toBe('next\n');
  });

  test('a command that kills its own group (the server with it) was killed, its output kept; the next command runs', async () => {
    const r = await sb().exec('echo before; kill -9 0; echo after');
    expect(r.exitCode).toBe(137);
    expect(r.signal).toBe('SIGKILL');
    expect(r.stdout).toBe('before\n');
    const next = await sb().exec('echo next');
    expect(next).toMatchObject({ exitCode: 0, stdout: 'next\n' });
  });

  test('a command that makes its output non-blocking and fills it leaves the server working', async () => {
    const script = [
      'import fcntl, os',
      'for fd in (1, 2):',
      '    fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) | os.O_NONBLOCK)',
      'n = 0',
      'while n < 2_000_000:',
      '    try:',
      "        n += os.write(1, b'x' * 65536)",
      '    except BlockingIOError:',
      '        pass',
      "os.write(2, b'done')",
    ].join('\n');
    await sb().writeFiles([{ path: 'nb.py', content: script }]);
    const r = await sb().exec(['python3', 'nb.py']);
    expect(r.exitCode).toBe(0);
    expect(r.stdoutInfo.bytes).toBeGreaterThanOrEqual(2_000_000);
    expect(r.stderr).toBe('done');
    const next = await sb().exec('echo next; echo err >&2');
    expect(next).toMatchObject({ exitCode: 0, stdout: 'next\n', stderr: 'err\n' });
  });

  test('a variable the shell cannot export reaches the command exactly, as the others do', async () => {
    const r = await sb().exec(['env'], { env: { 'A-B': 'x y', C: "it's\nmultiline" } });
    expect(r.stdout).toContain('A-B=x y\n');
    expect(r.stdout).toContain("C=it's\nmultiline\n");
    const plain = await sb().exec(['env'], { env: { C: "it's\nmultiline" } });
    expect(plain.stdout).toContain("C=it's\nmultiline\n");
    expect(plain.stdout).not.toMatch(/^(OLDPWD|PWD)=/m);
  });

  test('a missing program is exit 127 with the shell saying why', async () => {
    const r = await sb().exec(['no-such-program-here']);
    expect(r.exitCode).toBe(127);
    expect(r.stderr).toMatch(/no-such-program-here: not found/);
  });
});

/** Runs `fn` with a backend's worth of servers, closed after whatever happens. */
async function withServers(fn: (servers: HostServers) => Promise<void>): Promise<void> {
  const servers = new HostServers();
  try {
    await fn(servers);
  } finally {
    await servers.close();
  }
}

/** The kill of a command that leaves nothing (these tests' own kill is the servers' close). */
const nothing = () => new CommandKill(async () => undefined);

describe('host servers', () => {
  test('close ends every server and its pipes, a command one runs included', async () => {
    await withServers(async (servers) => {
      const a = (await servers.take())!;
      const b = (await servers.take())!;
      expect(a).toBeInstanceOf(HostServer);
      expect(b).not.toBe(a); // a claimed server is nobody else's
      const groups = [a.pgid, b.pgid];
      for (const g of groups) expect(groupOf(g).length).toBeGreaterThan(0);
      const t = uniqueSleep();
      let up!: () => void;
      const started = new Promise<void>((resolve) => (up = resolve));
      const running = a.run(
        {
          // It says `up` itself, once it runs with the token among its arguments.
          argv: ['python3', '-c', 'import time; print("up", flush=True); time.sleep(600)', t],
          env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
          cwd: '/',
          onOutput: () => up(),
        },
        nothing(),
      );
      await started;
      expect(processesWith(t)).toHaveLength(1);
      await servers.close();
      const out = await running;
      expect(out.result.exitCode).toBe(137);
      for (const g of groups) expect(groupOf(g)).toEqual([]);
      expect(processesWith(t)).toEqual([]);
      expect(await servers.take()).toBeNull();
    });
  });

  test("the harness's own script runs in the server's subshell, as `sh -c` would run it", async () => {
    await withServers(async (servers) => {
      const s = (await servers.take())!;
      const script = `f() { echo "in $(pwd) with $#"; }\nf a b\nexit 3`;
      const out = await s.run({ argv: ['/bin/sh', '-c', script], env: {}, cwd: '/tmp', internal: true }, nothing());
      expect(out.result).toMatchObject({ exitCode: 3, stdout: 'in / with 2\n', stderr: '' });
    });
  });

  test("a command gets exactly its variables, none of the server's", async () => {
    await withServers(async (servers) => {
      const s = (await servers.take())!;
      const none = await s.run({ argv: ['/usr/bin/env'], env: {}, cwd: '/tmp' }, nothing());
      expect(none.result).toMatchObject({ exitCode: 0, stdout: '' });
      s.claim();
      const one = await s.run({ argv: ['/usr/bin/env'], env: { A: '1' }, cwd: '/tmp' }, nothing());
      expect(one.result.stdout).toBe('A=1\n');
    });
  });

  test("a stopped command's server is given back only once its stop's kill is done: that kill takes the group's members for the command's", async () => {
    await withServers(async (servers) => {
      const s = (await servers.take())!;
      const t = uniqueSleep();
      let open!: () => void;
      const gate = new Promise<void>((resolve) => (open = resolve));
      let calls = 0;
      let stopping = false;
      // The stop's call kills the command, then is slow to finish its look, as on a busy machine;
      // any other call (the reap of what the command left) goes through.
      const kill = new CommandKill(async () => {
        const stop = stopping;
        stopping = false;
        calls++;
        for (const pid of processesWith(t)) process.kill(pid, 'SIGKILL');
        if (stop) await gate;
      });
      const framed = vi.spyOn(CommandServer.prototype, 'run');
      const stop = new AbortController();
      let ended = false;
      const running = s.run({ argv: ['sleep', t], env: {}, cwd: '/', signal: stop.signal }, kill).finally(() => (ended = true));
      try {
        await expect.poll(() => processesWith(t).length, { timeout: 30_000 }).toBe(1);
        stopping = true;
        stop.abort();
        expect(calls).toBe(1); // the abort called the kill at once
        let said = false;
        void (framed.mock.results[0]!.value as Promise<unknown>).then(() => (said = true));
        // The server says how the command ended without waiting for the stop's kill to finish.
        await expect
          .poll(() => said, { timeout: 30_000 })
          .toBe(true)
          .catch((e: unknown) => {
            throw new Error(`the server said nothing (kill calls: ${calls}, left: ${processesWith(t).join(' ') || 'none'})`, { cause: e });
          });
        expect(calls).toBe(2); // the stop's kill, and the reap of what the command left
        await new Promise((resolve) => setImmediate(resolve));
        expect(ended).toBe(false);
        expect(s.claim()).toBe(false);
      } finally {
        framed.mockRestore();
        open();
      }
      expect((await running).result.exitCode).toBe(137);
      expect(s.claim()).toBe(true);
      s.release();
      await kill.run(); // a kill called after the command is over (a late destroy) does nothing
      expect(calls).toBe(2);
    });
  });

  test('a server given back is taken again, not a new one', async () => {
    await withServers(async (servers) => {
      const a = (await servers.take())!;
      const first = await a.run({ argv: ['echo', 'one'], env: {}, cwd: '/' }, nothing());
      expect(first.result.stdout).toBe('one\n');
      expect(await servers.take()).toBe(a);
    });
  });

  test('a program that never closes its backend still exits, and its idle servers end with it', async () => {
    await unclosedHostBackend(
      'sandbox/host/local.js',
      'LocalBackend',
      "await Promise.all([sb.exec('true'), sb.exec('true')]);",
      async (pids) => {
        expect(pids.length).toBeGreaterThanOrEqual(2 * 5); // two servers, each with its shell, session leader and two cats
        // Each ends at the end of its input, which came with the program's exit.
        await expect.poll(() => pids.filter(isRunning), { timeout: 10_000 }).toEqual([]);
      },
    );
  });
});
