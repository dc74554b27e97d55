import net from 'node:net';
import os from 'node:os';
import { afterAll, afterEach, beforeEach, describe, expect, test } from 'vitest';
import { dockerClient } from '../../harness/sandbox/docker/client.js';
import { volumeNames } from '../../harness/sandbox/docker/config.js';
import { DockerBackend } from '../../harness/sandbox/docker/backend.js';
import type { Sandbox } from '../../harness/sandbox/core/types.js';
import { dockerTestOptions, dockerUnavailableReason } from '../helpers/backends-docker.js';
import { processesWith, uniqueSleep } from '../helpers/procs.js';

const unavailable = dockerUnavailableReason();
if (unavailable && process.env.CI) throw new Error(`CI must run the Docker backend's tests: ${unavailable}`);

/** Docker-only promises: what the engine is told (labels, limits, isolation), and what is left afterwards. */
describe.skipIf(unavailable)('docker backend', () => {
  const docker = dockerClient();
  const backend = new DockerBackend(dockerTestOptions({ runId: 'docker-test' }));
  let sb: Sandbox;

  beforeEach(async () => {
    sb = await backend.create({ runId: 'docker-test', fixtureId: 'case' });
  });
  afterEach(() => sb.destroy());
  afterAll(() => backend.close());

  test('everything created carries the run and owner labels; the limits are applied', async () => {
    const c = await docker.getContainer(sb.id).inspect();
    expect(c.Config.Labels).toMatchObject({
      'redgreen.run': 'docker-test',
      'redgreen.pid': String(process.pid),
      'redgreen.session': backend.session,
    });
    for (const v of volumeNames(sb.id)) {
      expect((await docker.getVolume(v).inspect()).Labels).toMatchObject({
        'redgreen.run': 'docker-test',
        'redgreen.pid': String(process.pid),
      });
    }
    const h = c.HostConfig;
    expect(h).toMatchObject({
      NetworkMode: 'none',
      ReadonlyRootfs: true,
      CapDrop: ['ALL'],
      SecurityOpt: ['no-new-privileges'],
      Init: true,
      Memory: 1024 ** 3,
      NanoCpus: 1e9,
      PidsLimit: 512,
    });
    expect(Object.keys(h.Tmpfs ?? {})).toEqual(['/tmp']);
    // Only the keeper (which commands must not be able to kill) runs as root, without capabilities.
    expect(c.Config.User).toBe('0:0');
  });

  test('commands run unprivileged on a read-only root; workspace, scratch, HOME and /tmp are writable', async () => {
    expect((await sb.exec('id -u; id -g')).stdout).toBe('1000\n1000\n');
    const r = await sb.exec('touch /usr/x 2>&1; touch "$HOME/h" /tmp/t /redgreen/s /workspace/w && echo writable');
    expect(r.stdout).toMatch(/Read-only file system/);
    expect(r.stdout).toMatch(/writable\n$/);
  });

  test('a command killing everything it may kill cannot take the sandbox down', async () => {
    await sb.exec('kill -9 -1');
    expect((await sb.exec('echo alive')).stdout).toBe('alive\n');
  });

  test('commands start with a new process’s signal handling, and cannot stop, trace or read the command server', async () => {
    expect((await sb.exec('grep -E "^Sig(Ign|Blk)" /proc/self/status')).stdout).toBe(
      'SigBlk:\t0000000000000000\nSigIgn:\t0000000000000000\n',
    );
    const server = `for p in /proc/[0-9]*; do case "$(tr '\\0' ' ' < $p/cmdline 2>/dev/null)" in *redgreen-server*) echo \${p#/proc/}; break;; esac; done`;
    const r = await sb.exec(
      `s=$(${server}); test -n "$s" && echo found; kill -STOP $s || echo no-stop; kill -9 $s || echo no-kill; ` +
        `cat /proc/$s/environ >/dev/null 2>&1 || echo no-environ; head -c1 /proc/$s/fd/0 >/dev/null 2>&1 || echo no-stdin; ` +
        `python3 -c "import ctypes, sys; sys.exit(ctypes.CDLL(None).ptrace(16, int(sys.argv[1]), 0, 0) == 0)" $s && echo no-trace`,
    );
    expect(r.stdout).toBe('found\nno-stop\nno-kill\nno-environ\nno-stdin\nno-trace\n');
    expect((await sb.exec('echo alive')).stdout).toBe('alive\n');
  });

  test('commands asked for at once in one sandbox each get their own output and exit code (one runs after the other)', async () => {
    const runs = await Promise.all(
      Array.from({ length: 4 }, (_, i) => sb.exec(`echo out-${i}; echo err-${i} >&2; sleep 0.1; exit ${i}`, { timeoutMs: 60_000 })),
    );
    runs.forEach((r, i) => expect([r.stdout, r.stderr, r.exitCode, r.timedOut]).toEqual([`out-${i}\n`, `err-${i}\n`, i, false]));
  });

  test('a write refused before it reads its input leaves the server in step', async () => {
    await sb.exec('ln -s /tmp link');
    await expect(sb.writeFiles([{ path: 'link/x.txt', content: Buffer.alloc(3 * 1024 * 1024, 1) }])).rejects.toMatchObject({
      code: 'SANDBOX_PATH_UNSAFE',
    });
    expect((await sb.exec('ls /tmp; echo next')).stdout).toBe('next\n');
  });

  test('the engine killing a container under a command is an infrastructure error, never a result', async () => {
    const running = sb.exec(`echo up; sleep ${uniqueSleep()}`, {
      onOutput: () =>
        void docker
          .getContainer(sb.id)
          .kill()
          .catch(() => undefined),
    });
    await expect(running).rejects.toMatchObject({ code: 'SANDBOX_FAILED' });
    await expect(sb.exec('true')).rejects.toMatchObject({ code: 'SANDBOX_FAILED' });
  });

  test('destroy leaves no container and no volume behind', async () => {
    await sb.exec('echo x > f');
    await sb.destroy();
    await expect(docker.getContainer(sb.id).inspect()).rejects.toMatchObject({ statusCode: 404 });
    const volumes = (await docker.listVolumes({ filters: { label: [`redgreen.session=${backend.session}`] } })).Volumes ?? [];
    expect(volumes.map((v) => v.Name).filter((n) => n.startsWith(sb.id))).toEqual([]);
  });

  // A listener on one of the host's own non-loopback addresses: a bridge reaches it (the host's loopback, never).
  const outside = Object.values(os.networkInterfaces())
    .flat()
    .find((a) => a && a.family === 'IPv4' && !a.internal)?.address;
  test.skipIf(!outside)('a command with network runs beside the sandbox on the same workspace; the sandbox stays offline', async () => {
    const server = net.createServer((s) => s.end('hello'));
    await new Promise<void>((r) => server.listen(0, outside, r));
    const port = (server.address() as net.AddressInfo).port;
    const probe = `python3 -c "import socket; s = socket.create_connection(('${outside}', ${port}), 2); print(s.recv(5).decode())"`;
    try {
      const online = await sb.exec(`${probe} > got.txt; echo "$HOME" > home.txt`, { network: true });
      expect(online.exitCode).toBe(0);
      expect(online.stderr).toBe(''); // the reaper spares the setup container's init
      expect((await sb.readFile('got.txt')).toString()).toBe('hello\n');
      expect((await sb.exec('cat home.txt; hostname')).stdout).toBe('/home/sandbox\nsandbox\n');
      expect((await sb.exec(probe)).exitCode).not.toBe(0);
      const setupContainers = await docker.listContainers({
        all: true,
        filters: { label: ['redgreen.role=network', `redgreen.session=${backend.session}`] },
      });
      expect(setupContainers).toEqual([]);
    } finally {
      server.close();
    }
  });

  test('a timeout in a command with network stops its whole tree', async () => {
    const t = uniqueSleep();
    const r = await sb.exec(`setsid sleep ${t} & sleep ${t}`, { network: true, timeoutMs: 500 });
    expect(r.timedOut).toBe(true);
    expect(r.exitCode).toBe(137);
    expect(processesWith(t)).toEqual([]);
  });

  test('reading a missing file or a folder fails like the local backend does', async () => {
    await expect(sb.readFile('nope.txt')).rejects.toMatchObject({ code: 'ENOENT' });
    await sb.exec('mkdir d');
    await expect(sb.readFile('d')).rejects.toMatchObject({ code: 'EISDIR' });
    await expect(sb.writeFiles([{ path: 'd', content: 'x' }])).rejects.toMatchObject({ code: 'EISDIR' });
  });
});

describe.skipIf(unavailable)('docker backend: a container that ran into a limit', () => {
  test('is not handed to the next sandbox of the run', async () => {
    const backend = new DockerBackend(
      dockerTestOptions({ runId: 'limit-reuse', limits: { memoryBytes: 1024 ** 3, cpus: 1, pids: 512, tmpBytes: 8 * 1024 ** 2 } }),
    );
    await backend.open('limit-reuse');
    try {
      const first = await backend.create({ runId: 'limit-reuse', fixtureId: 'full' });
      const r = await first.exec('head -c 9000000 /dev/zero > /tmp/fill');
      expect(r.limit).toMatchObject({ kind: 'disk' });
      await first.destroy();
      const second = await backend.create({ runId: 'limit-reuse', fixtureId: 'next' });
      expect(second.id).not.toBe(first.id);
      await second.destroy();
      // While a clean one is.
      const third = await backend.create({ runId: 'limit-reuse', fixtureId: 'again' });
      expect(third.id).toBe(second.id);
      await third.destroy();
    } finally {
      await backend.close();
    }
  });
});
