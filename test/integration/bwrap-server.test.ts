import { readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { suiteSandbox } from '../helpers/suite-sandbox.js';
import { BwrapBackend } from '../../harness/sandbox/bwrap/backend.js';
import { overlayAllowed } from '../../harness/sandbox/host/overlay.js';
import { backendCases } from '../helpers/backends.js';
import { isRunning, processesWith, uniqueSleep, unclosedHostBackend } from '../helpers/procs.js';

/** Host processes whose command line mentions `text` anywhere (a sandbox's folder). */
function processesMentioning(text: string): number[] {
  const found: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
    try {
      if (readFileSync(`/proc/${name}/cmdline`, 'utf8').includes(text)) found.push(Number(name));
    } catch {
      // gone
    }
  }
  return found;
}

/** What runs as pid 1 of a command's namespace: the sandbox's command server, or a bwrap of the command's own. */
const INIT = 'tr "\\0" " " </proc/1/cmdline; echo';

// backendCases fails in CI when bwrap cannot run; locally the suite is left out.
const bwrap = (await backendCases()).some((c) => c.name === 'bwrap');

describe.skipIf(!bwrap)('bwrap: the command server of a sandbox', () => {
  const backend = new BwrapBackend();
  const sb = suiteSandbox(backend, 'bwrap-server');

  test('commands run one after another through it, each in a fresh process, in the one workspace', async () => {
    const first = await sb().exec(`${INIT}; echo $$ > pid; echo x > kept`);
    expect(first.stdout).toMatch(/redgreen-server/);
    const second = await sb().exec(`${INIT}; cat kept; test "$(cat pid)" != $$ && echo other`);
    expect(second.stdout).toMatch(/redgreen-server .*\nx\nother\n$/s);
  });

  test('`kill -9 -1` ends what the command started, not the server: the next command runs normally', async () => {
    const t = uniqueSleep();
    // kill(-1) spares the caller and the namespace's init: the shell goes on, its sleep does not.
    const r = await sb().exec(`sleep ${t} & kill -9 -1; wait; echo after`);
    expect(r).toMatchObject({ exitCode: 0, stdout: 'after\n' });
    expect(processesWith(t)).toEqual([]);
    const next = await sb().exec(`${INIT}; echo fine`);
    expect(next).toMatchObject({ exitCode: 0, stderr: '' });
    expect(next.stdout).toMatch(/redgreen-server .*\nfine\n$/s);
  });

  test('a command can neither trace the server nor open its memory or its fds (where a frame token could be had)', async () => {
    const probe = [
      'import ctypes, os',
      'libc = ctypes.CDLL(None, use_errno=True)',
      "print('attach', libc.ptrace(16, 1, 0, 0), os.strerror(ctypes.get_errno()))",
      "for f in ('/proc/1/mem', '/proc/1/fd/1', '/proc/1/environ'):",
      '    try:',
      "        open(f, 'rb').close()",
      "        print(f, 'opened')",
      '    except OSError as e:',
      '        print(f, e.strerror)',
    ].join('\n');
    await sb().writeFiles([{ path: 'probe.py', content: probe }]);
    const r = await sb().exec(`${INIT}; python3 probe.py`);
    expect(r.stdout).toMatch(/redgreen-server/);
    expect(r.stdout).toContain('attach -1 Operation not permitted\n');
    for (const f of ['/proc/1/mem', '/proc/1/fd/1', '/proc/1/environ']) expect(r.stdout).toContain(`${f} Permission denied\n`);
    expect((await sb().exec(`${INIT}; echo still`)).stdout).toMatch(/redgreen-server .*\nstill\n$/s);
  });

  test('commands at the same time: the second gets a bwrap of its own, and each its own output and exit code', async () => {
    const results = await Promise.all([0, 1, 2].map((i) => sb().exec(`${INIT}; sleep 0.3; echo out${i}; echo err${i} >&2; exit ${i + 3}`)));
    results.forEach((r, i) => {
      expect(r.exitCode).toBe(i + 3);
      expect(r.stdout).toMatch(new RegExp(`\\nout${i}\\n$`));
      expect(r.stderr).toBe(`err${i}\n`);
    });
    expect(results.filter((r) => r.stdout.includes('redgreen-server'))).toHaveLength(1);
  });

  test("a command that makes its output non-blocking and floods it leaves the next command's output intact", async () => {
    const flood =
      'import fcntl, os, sys\n' +
      'for fd in (1, 2):\n' +
      '    fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) | os.O_NONBLOCK)\n' +
      'data = b"y" * (4 << 20)\n' +
      'view = memoryview(data)\n' +
      'while view:\n' +
      '    try:\n' +
      '        view = view[os.write(1, view):]\n' +
      '    except BlockingIOError:\n' +
      '        pass\n';
    await sb().writeFiles([{ path: 'flood.py', content: flood }]);
    const r = await sb().exec('python3 flood.py');
    expect(r.exitCode).toBe(0);
    expect(r.stdout.length).toBe(4 << 20);
    const big = await sb().exec('head -c 3000000 /dev/zero | tr "\\0" z; echo; echo done >&2');
    expect(big.stdout.length).toBe(3_000_001);
    expect(big.stderr).toBe('done\n');
  });

  test('after a timeout (the namespace ends with the command), the next command gets a new server', async () => {
    const t = uniqueSleep();
    const r = await sb().exec(`setsid sleep ${t} & sleep ${t}`, { timeoutMs: 300 });
    expect(r.timedOut).toBe(true);
    expect(processesWith(t)).toEqual([]);
    const next = await sb().exec(`${INIT}; cat kept`);
    expect(next.stdout).toMatch(/redgreen-server .*\nx\n$/s);
  });

  // A server started before the mount must give way to one that sees the overlay; a sandbox whose
  // first step is the mount starts none at create, so there is nothing to stop unused.
  test.skipIf(!overlayAllowed()).each([
    ['after a command started the server', true],
    ['as its first step (create started no server)', false],
  ])('a workspace started from a prepared tree %s is what the next command sees', async (_, commandFirst) => {
    const tree = await mkdtemp(path.join(os.tmpdir(), 'rg-bwrap-tree-'));
    const other = await backend.create({ runId: 'bwrap-server', fixtureId: 'layer' });
    const root = other.id.replace(/-[0-9a-f]+$/, '');
    try {
      await writeFile(path.join(tree, 'from-layer.txt'), 'prepared\n');
      if (commandFirst) expect((await other.exec(`${INIT}`)).stdout).toMatch(/redgreen-server/);
      else expect(processesMentioning(root)).toEqual([]);
      expect(await other.startFrom!(tree)).toBe(true);
      const r = await other.exec(`${INIT}; cat from-layer.txt`);
      expect(r.stdout).toMatch(/redgreen-server .*\nprepared\n$/s);
    } finally {
      await other.destroy();
      await rm(tree, { recursive: true, force: true });
    }
    expect(processesMentioning(root)).toEqual([]);
  });

  test('destroy ends the server and every host process of the sandbox', async () => {
    const other = await backend.create({ runId: 'bwrap-server', fixtureId: 'destroyed' });
    // The sandbox's host folder is named by its id without the last part (bwrap/backend.ts).
    const root = other.id.replace(/-[0-9a-f]+$/, '');
    await other.exec('true');
    // A command still running at destroy, beside the idle server.
    const running = other.exec(`sleep ${uniqueSleep()}`);
    await other.exec('true'); // the second command goes to a bwrap of its own while the first runs
    await other.destroy();
    expect((await running).exitCode).toBe(137);
    expect(processesMentioning(root)).toEqual([]);
  });
});

describe.skipIf(!bwrap)('bwrap: a server kept for the next sandbox of its folder', () => {
  /** The host pid of the namespace's init (the server), as the sandbox's folder names its processes. */
  const serverPid = (root: string) => processesMentioning(root).sort((a, b) => a - b);

  test('the idle server of a destroyed sandbox serves the next sandbox of its folder, cleaned, and ends with the backend', async () => {
    const backend = new BwrapBackend();
    await backend.open();
    let root = '';
    try {
      const first = await backend.create({ runId: 'bwrap-kept', fixtureId: 'first' });
      root = first.id.replace(/-[0-9a-f]+$/, '');
      await first.exec(
        'echo x > /tmp/left; echo y > /dev/shm/left; echo z > /dev/mqueue/left; ipcmk -Q >/dev/null; ipcmk -M 4096 >/dev/null',
      );
      const before = serverPid(root);
      await first.destroy();
      expect(serverPid(root)).toEqual(before); // the same processes: kept, not ended
      const second = await backend.create({ runId: 'bwrap-kept', fixtureId: 'second' });
      expect(second.id.startsWith(`${root}-`)).toBe(true);
      const r = await second.exec(`${INIT}; ls -A /tmp /dev/shm /dev/mqueue; cat /proc/sysvipc/msg /proc/sysvipc/shm | grep -vc '^ *key'`);
      expect(r.stdout).toMatch(/ redgreen-server \n\/dev\/mqueue:\n\n\/dev\/shm:\n\n\/tmp:\n0\n$/);
      expect(serverPid(root)).toEqual(before);
      await second.destroy();
    } finally {
      await backend.close();
    }
    expect(root).not.toBe('');
    expect(processesMentioning(root)).toEqual([]);
  });

  test('the namespace root and /dev take no writes (nothing there outlives a command), the bound folders and /dev/shm do', async () => {
    const backend = new BwrapBackend();
    await backend.open();
    try {
      const sb = await backend.create({ runId: 'bwrap-kept', fixtureId: 'readonly' });
      // The file of the sandbox's variables its commands source is one of them: a command cannot change the next one's.
      for (const p of ['/left', '/dev/left', '/etc/left', '/root/left', '/home/left', '/.redgreen-env']) {
        const r = await sb.exec(`echo x > ${p}`);
        expect(r.exitCode).not.toBe(0);
        expect(r.stderr).toMatch(/Read-only file system/);
      }
      const ok = await sb.exec(
        'for p in /workspace /tmp "$HOME" /redgreen /dev/shm; do echo x > "$p/ok" || exit 1; done; echo x > /dev/null && echo writable',
      );
      expect(ok.stdout).toBe('writable\n');
      await sb.destroy();
    } finally {
      await backend.close();
    }
  });

  test.skipIf(!overlayAllowed())('a server whose workspace became an overlay is not kept', async () => {
    const backend = new BwrapBackend();
    await backend.open();
    const tree = await mkdtemp(path.join(os.tmpdir(), 'rg-bwrap-tree-'));
    try {
      const first = await backend.create({ runId: 'bwrap-kept', fixtureId: 'layered' });
      const root = first.id.replace(/-[0-9a-f]+$/, '');
      expect(await first.startFrom!(tree)).toBe(true);
      expect((await first.exec('true')).exitCode).toBe(0);
      await first.destroy();
      expect(serverPid(root)).toEqual([]);
      const second = await backend.create({ runId: 'bwrap-kept', fixtureId: 'after' });
      expect(second.id.startsWith(`${root}-`)).toBe(true);
      await second.destroy();
    } finally {
      await backend.close();
      await rm(tree, { recursive: true, force: true });
    }
  });

  test('a program that never closes its backend still exits, and the server it kept ends with it', async () => {
    await unclosedHostBackend('sandbox/bwrap/backend.js', 'BwrapBackend', "await sb.exec('true');", async (pids) => {
      expect(pids.length).toBeGreaterThan(0); // the kept server: its host shell, bwrap, the server, the cats
      await expect.poll(() => pids.filter(isRunning), { timeout: 10_000 }).toEqual([]);
    });
  });
});
