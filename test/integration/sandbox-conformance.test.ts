import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import { LocalBackend } from '../../harness/sandbox/host/local.js';
import { downloadFile, uploadFile } from '../../harness/sandbox/core/transfer.js';
import { walkTree, type ReadTree } from '../../harness/sandbox/core/tree.js';
import type { Sandbox, SandboxBackend } from '../../harness/sandbox/core/types.js';
import { backendCases, shellServerCases } from '../helpers/backends.js';
import { processesWith, uniqueSleep } from '../helpers/procs.js';

/**
 * `bomb.py <n> <token>`: four detached holders fork n processes between them (each `sleep
 * <token>`) until the sandbox refuses a fork; the command says `full` (a fork was refused) or
 * `started` (all n run) and exits. Its exit frees a pid, which the holders, woken by it, take
 * back at once, retrying as a fork bomb does (a bounded number of times): whatever the command's
 * wrapper tries to fork then is refused.
 */
const FORK_BOMB = `import os, sys, time
n, token, holders = int(sys.argv[1]), sys.argv[2], 4
report_r, report_w = os.pipe()
exit_r, exit_w = os.pipe()

def fill(held, budget):
    refused = 0
    while held < n // holders and refused < budget:
        try:
            pid = os.fork()
        except OSError:
            refused += 1
            continue
        if pid == 0:
            os.execv('/bin/sleep', ['sleep', token])
        held += 1
    return held, refused

for _ in range(holders):
    if os.fork() == 0:
        os.setsid()
        os.close(exit_w)
        null = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(null, fd)
        held, refused = fill(0, 1)
        os.write(report_w, b'F' if refused else b'S')
        os.read(exit_r, 1)
        fill(held, 20000)
        time.sleep(600)
        os._exit(0)
got = b''
while len(got) < holders:
    got += os.read(report_r, holders)
print('full' if b'F' in got else 'started')
`;

/** A tree as a fixture's fingerprint reads it: walked, and every file's bytes. */
async function readTree(dir: string): Promise<ReadTree> {
  const entries = await walkTree(dir);
  const files = entries.filter((e) => e.kind === 'file');
  return { entries, contents: new Map(await Promise.all(files.map(async (e) => [e.rel, await readFile(path.join(dir, e.rel))] as const))) };
}

const cases = await backendCases();
describe.each([...cases, ...shellServerCases(cases)])('sandbox conformance: $name', ({ make, isolating }) => {
  let backend: SandboxBackend;
  let sb: Sandbox;
  const extra: Sandbox[] = [];
  let tmp: string;

  beforeAll(async () => {
    backend = await make();
  });
  beforeEach(async () => {
    sb = await backend.create({ runId: 'conformance', fixtureId: 'case' });
    tmp = await mkdtemp(path.join(os.tmpdir(), 'rg-conf-'));
  });
  afterEach(async () => {
    await Promise.all([sb, ...extra.splice(0)].map((s) => s.destroy()));
    await rm(tmp, { recursive: true, force: true });
  });

  test('exit codes are results, not exceptions', async () => {
    expect((await sb.exec('exit 0')).exitCode).toBe(0);
    expect((await sb.exec('exit 7')).exitCode).toBe(7);
    // 128 + 9; `signal` is informational (a wrapper such as bwrap reports the code, not the signal).
    expect((await sb.exec('kill -9 $$')).exitCode).toBe(137);
    const missing = await sb.exec(['/no/such/program']);
    expect(missing.exitCode).toBe(127);
  });

  test('stdout and stderr stay separate; argv is passed verbatim', async () => {
    const r = await sb.exec('echo out; echo err >&2; echo out2');
    expect(r.stdout).toBe('out\nout2\n');
    expect(r.stderr).toBe('err\n');
    const argv = await sb.exec(['printf', '%s|', 'a b', '"q"', "it's", '$HOME']);
    expect(argv.stdout).toBe('a b|"q"|it\'s|$HOME|');
  });

  test('files round-trip byte for byte, binary and non-ASCII names included', async () => {
    const bytes = Buffer.from(Array.from({ length: 256 }, (_, i) => i));
    await sb.writeFiles([
      { path: 'bin/all-bytes.dat', content: bytes },
      { path: 'données/日本語 file.txt', content: 'héllo\r\n', mode: 0o755 },
    ]);
    expect(Buffer.compare(await sb.readFile('bin/all-bytes.dat'), bytes)).toBe(0);
    const sum = await sb.exec('sha256sum bin/all-bytes.dat');
    expect(sum.stdout.split(' ')[0]).toBe(createHash('sha256').update(bytes).digest('hex'));
    const ls = await sb.exec(['ls', 'données']);
    expect(ls.stdout).toBe('日本語 file.txt\n');
    expect((await sb.exec(['test', '-x', 'données/日本語 file.txt'])).exitCode).toBe(0);
    expect((await sb.readFile('données/日本語 file.txt')).toString()).toBe('héllo\r\n');
  });

  test('a file written again is exactly the new content and mode; a link to it keeps the old one; a symlink is refused, never written through', async () => {
    await sb.writeFiles([{ path: 'again.txt', content: 'a long first version\n', mode: 0o755 }]);
    await sb.writeFiles([{ path: 'again.txt', content: 'short\n', mode: 0o644 }]);
    expect((await sb.readFile('again.txt')).toString()).toBe('short\n');
    expect((await sb.exec(['stat', '-c', '%a %s', 'again.txt'])).stdout).toBe('644 6\n');
    expect((await sb.exec('printf old > linked.txt && ln linked.txt other-link.txt && ln -s other-link.txt sym.txt')).exitCode).toBe(0);
    await sb.writeFiles([{ path: 'linked.txt', content: 'new' }]);
    await expect(sb.writeFiles([{ path: 'sym.txt', content: 'through' }])).rejects.toMatchObject({ code: 'SANDBOX_PATH_UNSAFE' });
    expect((await sb.exec('cat linked.txt other-link.txt')).stdout).toBe('newold');
  });

  test('big files stream in (from an offset) and out byte for byte; a path outside the workspace is refused', async () => {
    const big = Buffer.alloc(3 * 1024 * 1024 + 17);
    for (let i = 0; i < big.length; i++) big[i] = (i * 7919) % 251;
    const header = Buffer.from('{"meta":"line"}\n');
    const host = path.join(tmp, 'entry.bin');
    await writeFile(host, Buffer.concat([header, big]));
    await uploadFile(sb, host, 'deep/big.bin', { start: header.length, mode: 0o600 });
    const inside = await sb.exec('sha256sum deep/big.bin; stat -c %a deep/big.bin');
    expect(inside.stdout).toBe(`${createHash('sha256').update(big).digest('hex')}  deep/big.bin\n600\n`);
    await sb.exec('printf tail >> deep/big.bin');
    const back = path.join(tmp, 'back.bin');
    await downloadFile(sb, 'deep/big.bin', back);
    expect(
      createHash('sha256')
        .update(await readFile(back))
        .digest('hex'),
    ).toBe(
      createHash('sha256')
        .update(Buffer.concat([big, Buffer.from('tail')]))
        .digest('hex'),
    );
    await expect(uploadFile(sb, host, '../outside.bin')).rejects.toMatchObject({ code: 'SANDBOX_PATH_UNSAFE' });
    await expect(downloadFile(sb, 'no-such-file', path.join(tmp, 'none'))).rejects.toThrow();
    expect(existsSync(path.join(tmp, 'none'))).toBe(false); // no partial file left behind
  });

  test('uploadDir copies a tree with its files’ modes, keeps inner symlinks and refuses ones that leave it', async () => {
    await mkdir(path.join(tmp, 'src/ü'), { recursive: true });
    await writeFile(path.join(tmp, 'src/ü/a.txt'), 'A');
    await symlink('ü/a.txt', path.join(tmp, 'src/link'));
    await mkdir(path.join(tmp, 'src/node_modules'));
    await writeFile(path.join(tmp, 'src/node_modules/skip.js'), '');
    // Small files and a big one (copied differently by host backends), each with its own mode.
    await writeFile(path.join(tmp, 'src/run.sh'), 'echo ran\n');
    await chmod(path.join(tmp, 'src/run.sh'), 0o755);
    await writeFile(path.join(tmp, 'src/secret'), 's');
    await chmod(path.join(tmp, 'src/secret'), 0o600);
    await writeFile(path.join(tmp, 'src/big.bin'), Buffer.alloc(300_000, 7));
    await chmod(path.join(tmp, 'src/big.bin'), 0o640);
    const stats = await sb.uploadDir(path.join(tmp, 'src'));
    expect(stats.files).toBe(5);
    expect((await sb.exec('cat link; ls -a')).stdout).toBe('A.\n..\nbig.bin\nlink\nrun.sh\nsecret\nü\n');
    expect(
      (
        await sb.exec(
          "./run.sh; for f in run.sh secret big.bin; do ls -l $f | cut -c1-10; done; tr -d '\\007' < big.bin | wc -c; wc -c < big.bin",
        )
      ).stdout,
    ).toBe('ran\n-rwxr-xr-x\n-rw-------\n-rw-r-----\n0\n300000\n');
    await symlink('/etc', path.join(tmp, 'src/escape'));
    const other = await backend.create({ runId: 'conformance', fixtureId: 'upload' });
    extra.push(other);
    await expect(other.uploadDir(path.join(tmp, 'src'))).rejects.toMatchObject({ code: 'UPLOAD_UNSAFE' });
  });

  test('uploadDir takes a tree its caller read already: its entries less what it skips, with the bytes as read', async () => {
    const src = path.join(tmp, 'src');
    await mkdir(path.join(src, 'meta'), { recursive: true });
    await writeFile(path.join(src, 'a.txt'), 'as read');
    await chmod(path.join(src, 'a.txt'), 0o750);
    await writeFile(path.join(src, 'meta/m.json'), '{}');
    await writeFile(path.join(src, 'fixture.json'), '{}');
    const { entries, contents } = await readTree(src);
    // The tree changes on disk once read: the sandbox gets what was read (what a fixture's fingerprint hashed).
    await writeFile(path.join(src, 'a.txt'), 'changed on disk');
    await writeFile(path.join(src, 'new.txt'), 'never read');
    const stats = await sb.uploadDir(src, { skip: ['meta', 'fixture.json'], tree: { entries, contents } });
    expect(stats.files).toBe(1);
    expect((await sb.exec('ls -A; ls -l a.txt | cut -c1-10; cat a.txt')).stdout).toBe('a.txt\n-rwxr-x---\nas read');
  });

  test('paths outside the workspace are refused', async () => {
    for (const p of ['../escape.txt', '/etc/redgreen-escape', 'a/../../escape']) {
      await expect(sb.writeFiles([{ path: p, content: 'x' }])).rejects.toMatchObject({ code: 'SANDBOX_PATH_UNSAFE' });
      await expect(sb.readFile(p)).rejects.toMatchObject({ code: 'SANDBOX_PATH_UNSAFE' });
    }
    await sb.exec(`ln -s ${tmp} out`);
    await expect(sb.writeFiles([{ path: 'out/x.txt', content: 'x' }])).rejects.toMatchObject({ code: 'SANDBOX_PATH_UNSAFE' });
    expect(existsSync(path.join(tmp, 'x.txt'))).toBe(false);
  });

  test('a timeout kills the whole tree, detached and re-parented children included', async () => {
    const t = uniqueSleep();
    const r = await sb.exec(`sleep ${t} & setsid sleep ${t} & (sleep ${t} &); nohup sleep ${t} >/dev/null 2>&1 & sleep ${t}`, {
      timeoutMs: 500,
    });
    expect(r.timedOut).toBe(true);
    expect(processesWith(t)).toEqual([]);
  });

  test('no process outlives the command that started it', async () => {
    // Repeated: the leftover may be caught inside its exec, or killed but not yet gone.
    for (let i = 0; i < 20; i++) {
      const t = uniqueSleep();
      const r = await sb.exec(`setsid sleep ${t} >/dev/null 2>&1 < /dev/null & echo started`);
      expect(r.stdout).toBe('started\n');
      expect(r.timedOut).toBe(false);
      expect(processesWith(t)).toEqual([]);
    }
  });

  test('a fork bomb a command leaves at the pids limit is gone before the next command, which runs normally', async () => {
    const t = uniqueSleep();
    await sb.writeFiles([
      { path: 'bomb.py', content: FORK_BOMB },
      { path: 'kept.txt', content: 'kept' },
    ]);
    // More processes than the test backends' pids limits (512 for containers, 1024 for bwrap's cgroup):
    // the bomb fills the sandbox and keeps retrying; where nothing limits it, it stops at its count.
    const left = await sb.exec(['python3', 'bomb.py', '1100', t], { timeoutMs: 60_000 });
    expect(left.timedOut).toBe(false);
    expect(left.exitCode).toBe(0);
    expect(left.stdout).toMatch(/^(full|started)\n$/);
    expect(processesWith(t)).toEqual([]);
    const next = await sb.exec(
      "echo $(cat kept.txt) && python3 -c \"import subprocess; print(subprocess.run(['echo', 'forked'], capture_output=True, text=True).stdout.strip())\"",
    );
    expect(next.stdout).toBe('kept\nforked\n');
    expect(next.exitCode).toBe(0);
  });

  test('an abort signal stops the command and its children', async () => {
    const t = uniqueSleep();
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 200);
    const r = await sb.exec(`sleep ${t} & sleep ${t}`, { signal: ac.signal });
    expect(r.aborted).toBe(true);
    expect(processesWith(t)).toEqual([]);
  });

  test('output beyond the cap is counted and hashed, not kept', async () => {
    const r = await sb.exec('head -c 5000000 /dev/zero | tr "\\0" "a"; echo END', { maxOutputBytes: 1000 });
    expect(r.stdoutInfo.bytes).toBe(5_000_004);
    expect(r.truncated).toBe(true);
    expect(r.stdout.length).toBeLessThan(1200);
    expect(r.stdout.endsWith('END\n')).toBe(true);
    expect(r.stdoutInfo.sha256).toBe(
      createHash('sha256')
        .update(Buffer.concat([Buffer.alloc(5_000_000, 'a'), Buffer.from('END\n')]))
        .digest('hex'),
    );
  });

  test('output bytes are counted and hashed as they came, invalid UTF-8 included, from the first command on', async () => {
    // A fresh sandbox's first command may carry deferred work in front of it (e2b's prelude).
    await sb.writeFiles([{ path: 'first.txt', content: 'x' }]);
    const bytes = Buffer.from([0xff, 0xfe, 0x6f, 0x6b, 0xc3, 0x0a, 0xe2, 0x82]);
    for (const r of [
      await sb.exec("printf '\\377\\376ok\\303\\n\\342\\202'"),
      await sb.exec("printf '\\377\\376ok\\303\\n\\342\\202' >&2"),
    ]) {
      const info = r.stdoutInfo.bytes ? r.stdoutInfo : r.stderrInfo;
      expect(info.bytes).toBe(bytes.length);
      expect(info.sha256).toBe(createHash('sha256').update(bytes).digest('hex'));
    }
  });

  test('the environment is an allowlist: harness secrets stay out', async () => {
    process.env.REDGREEN_TEST_SECRET = 'hunter2-secret';
    try {
      const s = await backend.create({ runId: 'conformance', fixtureId: 'env' });
      extra.push(s);
      const r = await s.exec('env', { env: { GIVEN: 'yes' } });
      expect(r.stdout).not.toContain('hunter2-secret');
      expect(r.stdout).toContain('GIVEN=yes\n');
      expect(r.stdout).not.toContain(`HOME=${os.homedir()}\n`);
    } finally {
      delete process.env.REDGREEN_TEST_SECRET;
    }
  });

  test('cwd is relative to the workspace and cannot leave it', async () => {
    await sb.writeFiles([{ path: 'sub/f.txt', content: 'here' }]);
    expect((await sb.exec('cat f.txt', { cwd: 'sub' })).stdout).toBe('here');
    await expect(sb.exec('pwd', { cwd: '../..' })).rejects.toMatchObject({ code: 'SANDBOX_PATH_UNSAFE' });
  });

  test('destroy is idempotent; a destroyed sandbox refuses work', async () => {
    await sb.writeFiles([{ path: 'f', content: 'x' }]);
    await sb.destroy();
    await sb.destroy();
    await expect(sb.exec('true')).rejects.toMatchObject({ code: 'SANDBOX_DESTROYED' });
  });

  test('within a run, a new sandbox sees nothing of one destroyed before it (a backend may reuse its folders)', async () => {
    const runBackend = await make();
    await runBackend.open?.('conformance-reuse');
    try {
      const first = await runBackend.create({ runId: 'conformance-reuse', fixtureId: 'first' });
      await first.writeFiles([{ path: 'kept.txt', content: 'x' }]);
      await first.exec(
        'mkdir -p .hidden ro/deep && touch .hidden/f ro/deep/f && chmod 500 ro/deep && chmod 500 ro && ' +
          'touch "$HOME/.profile-mark" "${TMPDIR:-/tmp}/tmp-mark" "$REDGREEN_SCRATCH/scratch-mark" && chmod 700 .',
      );
      await first.destroy();
      const second = await runBackend.create({ runId: 'conformance-reuse', fixtureId: 'second' });
      extra.push(second);
      const seen = await second.exec(
        'ls -A; ls -A "$HOME" | grep -c mark; ls -A "${TMPDIR:-/tmp}" | grep -c mark; ls -A "$REDGREEN_SCRATCH" | grep -c mark; touch new && echo writable',
      );
      expect(seen.stdout).toBe('0\n0\n0\nwritable\n');
      await expect(second.readFile('kept.txt')).rejects.toThrow();
    } finally {
      await runBackend.close?.();
    }
  });

  test('20 sandboxes in parallel: every output is its own and none is empty', async () => {
    const boxes = await Promise.all(Array.from({ length: 20 }, (_, i) => backend.create({ runId: 'conformance', fixtureId: `p${i}` })));
    extra.push(...boxes);
    const outs = await Promise.all(
      boxes.map(async (b, i) => {
        await b.writeFiles([{ path: 'id.txt', content: `box-${i}` }]);
        return b.exec(`cat id.txt; seq 1 20000 | tail -n 1; echo " $REDGREEN_PROBE"`, { env: { REDGREEN_PROBE: `probe-${i}` } });
      }),
    );
    outs.forEach((r, i) => {
      expect(r.exitCode).toBe(0);
      expect(r.stdout).toBe(`box-${i}20000\n probe-${i}\n`);
    });
  });

  // Only isolating backends promise these; the local backend does not register them at all.
  if (isolating)
    describe('isolation', () => {
      test('no network, not even to the host loopback', async () => {
        const server = net.createServer((c) => {
          c.on('error', () => undefined); // the probe hangs up without reading
          c.end('hello');
        });
        await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
        const port = (server.address() as net.AddressInfo).port;
        try {
          const probe = `python3 -c "import socket; socket.create_connection(('127.0.0.1', ${port}), 2); print('connected')"`;
          const r = await sb.exec(probe);
          expect(r.stdout).not.toContain('connected');
          expect(r.exitCode).not.toBe(0);
          // The same probe from the host connects: the check above can fail.
          const host = await new LocalBackend().create({ runId: 'conformance', fixtureId: 'control' });
          extra.push(host);
          expect((await host.exec(probe)).stdout).toBe('connected\n');
        } finally {
          server.close();
        }
      });

      test('with network a command still never reaches the host loopback', async () => {
        const server = await listen('127.0.0.1');
        try {
          const r = await sb.exec(connectProbe('127.0.0.1', server.port), { network: true });
          expect(r.stdout).not.toContain('connected');
          expect(r.exitCode).not.toBe(0);
          const host = await new LocalBackend().create({ runId: 'conformance', fixtureId: 'control' });
          extra.push(host);
          expect((await host.exec(connectProbe('127.0.0.1', server.port))).stdout).toBe('connected\n');
        } finally {
          server.close();
        }
      });

      // The outside this machine offers: a listener on one of the host's own non-loopback addresses.
      test.skipIf(!OUTSIDE)(
        `with network a command reaches the outside (${OUTSIDE ?? 'no non-loopback address here'}); without, it does not`,
        async () => {
          const server = await listen(OUTSIDE!);
          try {
            const probe = connectProbe(OUTSIDE!, server.port);
            expect((await sb.exec(probe, { network: true })).stdout).toBe('connected\n');
            const offline = await sb.exec(probe);
            expect(offline.stdout).not.toContain('connected');
            expect(offline.exitCode).not.toBe(0);
          } finally {
            server.close();
          }
        },
      );

      test('no write to the host outside the workspace, no read of the host home or the harness', async () => {
        const secret = path.join(os.homedir(), `.redgreen-conformance-secret-${process.pid}`);
        await writeFile(secret, 'do not read');
        const marker = path.join(os.tmpdir(), `rg-conformance-write-${process.pid}`);
        try {
          expect((await sb.exec(['cat', secret])).exitCode).not.toBe(0);
          expect((await sb.exec(['ls', process.cwd()])).exitCode).not.toBe(0);
          await sb.exec(`touch ${marker}; echo x > /usr/redgreen-x; echo x > /etc/redgreen-x`);
          expect(existsSync(marker)).toBe(false);
          expect(existsSync('/usr/redgreen-x')).toBe(false);
          expect(existsSync('/etc/redgreen-x')).toBe(false);
          expect((await sb.exec('touch /workspace/ok && echo ok')).stdout).toBe('ok\n');
        } finally {
          await rm(secret, { force: true });
          await rm(marker, { force: true });
        }
      });

      test('what a command leaves with a cleared environment (no marker to find it by) is gone too, a fork bomb included', async () => {
        const t = uniqueSleep();
        await sb.writeFiles([{ path: 'bomb.py', content: FORK_BOMB }]);
        // `subprocess.run(..., env={})` in a test does the same: nothing marks these processes as the command's.
        const left = await sb.exec(['env', '-i', '/usr/bin/python3', 'bomb.py', '1100', t], { timeoutMs: 60_000 });
        expect(left.exitCode).toBe(0);
        expect(processesWith(t)).toEqual([]);
        const next = await sb.exec('x=$(echo forked) && echo $x');
        expect(next.stdout).toBe('forked\n');
      });

      test('within a run, a new sandbox sees nothing of one destroyed before it: processes, shared memory, message queues, IPC objects, environment', async () => {
        const runBackend = await make();
        await runBackend.open?.('conformance-reuse-ipc');
        const t = uniqueSleep();
        // How many System V IPC objects the sandbox sees, then the names in /dev/shm and /dev/mqueue.
        const look =
          'cat /proc/sysvipc/shm /proc/sysvipc/msg /proc/sysvipc/sem | grep -vc "^ *key"; find /dev/shm /dev/mqueue -mindepth 1 2>/dev/null';
        try {
          const first = await runBackend.create({ runId: 'conformance-reuse-ipc', fixtureId: 'first' });
          const made = await first.exec(
            `{ ipcmk -M 4096 && ipcmk -Q && ipcmk -S 1; } >/dev/null && echo x > /dev/shm/rg-shm-mark && ` +
              `python3 -c "import os; os.close(os.open('/dev/mqueue/rg-mq-mark', os.O_CREAT | os.O_WRONLY))"; ` +
              `(setsid sleep ${t} >/dev/null 2>&1 &); ${look}`,
            { env: { REDGREEN_FIRST_ONLY: 'from-the-first' } },
          );
          // The first sandbox did make them (wherever the backend gives it /dev/shm and /dev/mqueue).
          expect(Number(made.stdout.split('\n')[0])).toBeGreaterThanOrEqual(3);
          await first.destroy();
          const second = await runBackend.create({ runId: 'conformance-reuse-ipc', fixtureId: 'second' });
          // The pattern does not match its own text, so neither grep nor its shell counts.
          const seen = await second.exec(
            `${look}; env | grep -c FIRST_ONLY; grep -l '[${t[0]}]${t.slice(1)}' /proc/[0-9]*/cmdline 2>/dev/null | wc -l`,
          );
          expect(seen.stdout).toBe('0\n0\n0\n');
          await second.destroy();
          expect(processesWith(t)).toEqual([]);
        } finally {
          await runBackend.close?.();
        }
      });

      test('no capabilities inside', async () => {
        const r = await sb.exec(['sh', '-c', 'grep CapEff /proc/self/status']);
        expect(r.stdout.trim()).toBe('CapEff:\t0000000000000000');
      });
    });
});

/** A first IPv4 address of this host that is not loopback, if it has one. */
const OUTSIDE = Object.values(os.networkInterfaces())
  .flat()
  .find((a) => a && a.family === 'IPv4' && !a.internal)?.address;

/** A TCP server on `host`, an ephemeral port, that greets and hangs up. */
async function listen(host: string): Promise<{ port: number; close: () => void }> {
  const server = net.createServer((c) => {
    c.on('error', () => undefined); // the probe hangs up without reading
    c.end('hello');
  });
  await new Promise<void>((r) => server.listen(0, host, r));
  return { port: (server.address() as net.AddressInfo).port, close: () => server.close() };
}

function connectProbe(host: string, port: number): string {
  return `python3 -c "import socket; socket.create_connection(('${host}', ${port}), 2); print('connected')"`;
}
