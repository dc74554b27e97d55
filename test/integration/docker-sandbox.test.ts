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
