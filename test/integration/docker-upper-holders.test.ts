import { randomBytes } from 'node:crypto';
import type Docker from 'dockerode';
import { describe, expect, test } from 'vitest';
import { dockerClient } from '../../harness/sandbox/docker/client.js';
import { DockerBackend } from '../../harness/sandbox/docker/backend.js';
import { LABEL } from '../../harness/sandbox/docker/labels.js';
import { pruneLayers } from '../../harness/sandbox/docker/layers.js';
import type { UpperHolders } from '../../harness/sandbox/docker/upper-holders.js';
import { podmanClient } from '../../harness/sandbox/podman/client.js';
import { dockerTestOptions, dockerUnavailableReason } from '../helpers/backends-docker.js';
import { saveSmallLayer } from '../helpers/layer-fixture.js';
import { useTempDirs } from '../helpers/temp-dirs.js';

const unavailable = dockerUnavailableReason();
if (unavailable && process.env.CI) throw new Error(`CI must run the Docker backend's tests: ${unavailable}`);

const tempDir = useTempDirs('rg-dholders-');

const engines: { name: string; client: () => Docker }[] = [
  { name: 'docker', client: dockerClient },
  // Podman speaks the same API; it runs here when its socket is up (CI starts it).
  ...(process.env.CONTAINER_HOST || process.env.CI ? [{ name: 'podman', client: podmanClient }] : []),
];

/** What this backend session still has on the engine: containers by role, and volumes. */
async function left(docker: Docker, backend: DockerBackend) {
  const session = `${LABEL.session}=${backend.session}`;
  const containers = await docker.listContainers({ all: true, filters: { label: [session] } });
  const volumes = (await docker.listVolumes({ filters: { label: [session] } })).Volumes ?? [];
  return {
    holders: containers.filter((c) => c.Labels[LABEL.role] === 'holder').length,
    containers: containers.length,
    volumes: volumes.map((v) => v.Name).sort(),
  };
}

const volumesOf = (prefix: string) => ['home', 'scratch', 'ws'].map((s) => `${prefix}-${s}`);

describe.skipIf(unavailable).each(engines)('upper holders on $name', ({ name, client }) => {
  const backendOn = (docker: Docker, runId: string, extra: Parameters<typeof dockerTestOptions>[0] = {}) =>
    new DockerBackend(dockerTestOptions({ runId, pool: 1, ...extra, ...(name === 'podman' ? { docker, name } : {}) }));

  test('a holder serves its batch, goes once every slot is settled, and takes with it the volumes of slots whose sandbox left first', async () => {
    const docker = client();
    const backend = backendOn(docker, 'docker-holders');
    // --pool 1: batches of 2.
    const holders = (backend as unknown as { uppers: UpperHolders }).uppers;
    try {
      await backend.open('docker-holders');
      const image = backend.defaultImage;
      const [a, b] = await Promise.all([holders.take(image), holders.take(image)]);
      expect(a).not.toBe(b);
      expect((await left(docker, backend)).holders).toBe(1);
      holders.started(a!);
      // `a`'s sandbox ends while the holder still mounts its workspace: the holder removes its volumes.
      expect(await holders.leave(a!)).toBe(true);
      expect((await left(docker, backend)).volumes).toEqual(expect.arrayContaining(volumesOf(a!)));
      // The last slot settles: the holder goes, and with it `a`'s volumes; `b`'s stay its sandbox's.
      holders.started(b!);
      expect(await holders.leave(b!)).toBe(false);
      const after = await left(docker, backend);
      expect(after.holders).toBe(0);
      expect(after.volumes.filter((v) => v.startsWith(`${a!}-`))).toEqual([]);
      expect(after.volumes).toEqual(expect.arrayContaining(volumesOf(b!)));
      // A new batch for the next take; close removes it and the slot no one took.
      await holders.take(image);
      expect((await left(docker, backend)).holders).toBe(1);
    } finally {
      await backend.close();
    }
    expect(await left(docker, backend)).toEqual({ holders: 0, containers: 0, volumes: [] });
  });

  test('a holder that dies hands out nothing more: the next take makes a new batch, and what the dead one held goes', async () => {
    const docker = client();
    const backend = backendOn(docker, 'docker-holders-dead');
    const holders = (backend as unknown as { uppers: UpperHolders }).uppers;
    const open = (holders as unknown as { open: Map<string, unknown> }).open;
    try {
      await backend.open('docker-holders-dead');
      const image = backend.defaultImage;
      // --pool 1: a batch of 2, one slot taken, one free.
      const a = await holders.take(image);
      const session = `${LABEL.session}=${backend.session}`;
      const [holder] = await docker.listContainers({ filters: { label: [session, `${LABEL.role}=holder`] } });
      await docker.getContainer(holder!.Id).kill();
      // Its server's end reaches the harness a moment after the container's.
      await expect.poll(() => open.has(image), { timeout: 20_000 }).toBe(false);
      const b = await holders.take(image);
      const running = await docker.listContainers({ filters: { label: [session, `${LABEL.role}=holder`] } });
      expect(running.map((c) => c.Id)).not.toContain(holder!.Id);
      expect(running).toHaveLength(1);
      // `a`'s sandbox gives up (its container could not start): the dead batch goes, its volumes with it.
      expect(await holders.leave(a)).toBe(true);
      await expect
        .poll(async () => (await left(docker, backend)).volumes.filter((v) => v.startsWith(`${a}-`)), { timeout: 20_000 })
        .toEqual([]);
      expect((await left(docker, backend)).volumes).toEqual(expect.arrayContaining(volumesOf(b)));
    } finally {
      await backend.close();
    }
    expect(await left(docker, backend)).toEqual({ holders: 0, containers: 0, volumes: [] });
  });

  test('an image no holder can be made of is not tried again; other images are unaffected', async () => {
    const docker = client();
    const backend = backendOn(docker, 'docker-holders-broken');
    const holders = (backend as unknown as { uppers: UpperHolders }).uppers;
    const missing = `redgreen/missing-${randomBytes(4).toString('hex')}:none`;
    try {
      await backend.open('docker-holders-broken');
      const first = await holders.take(missing).catch((e: unknown) => e);
      expect(first).toBeInstanceOf(Error);
      expect(await holders.take(missing).catch((e: unknown) => e)).toBe(first);
      await holders.take(backend.defaultImage);
    } finally {
      await backend.close();
    }
    expect(await left(docker, backend)).toEqual({ holders: 0, containers: 0, volumes: [] });
  });

  test('a container started ahead on a holder slot sees the layer, writes its own copy, within the disk limit', async () => {
    const docker = client();
    const backend = backendOn(docker, 'docker-holders-ahead', { limits: { diskBytes: 32 * 1024 ** 2 } });
    const cacheDir = await tempDir();
    const scope = `test-${randomBytes(4).toString('hex')}`;
    const spec = { runId: 'docker-holders-ahead', fixtureId: 'ahead' };
    try {
      await backend.open('docker-holders-ahead');
      const key = await saveSmallLayer(backend, spec, { scope, cacheDir });
      for (const round of [1, 2, 3]) {
        backend.expectLayer!(spec, { key, cacheDir });
        const sb = await backend.create(spec);
        try {
          expect(await sb.startLayer!(key, { cacheDir })).toMatchObject({ ahead: true });
          // Each sandbox starts from the layer as it was, whatever the one before wrote.
          expect((await sb.exec(`cat a.txt && echo ${round} > a.txt && ls -A`)).stdout).toBe('a\na.txt\n');
          if (backend.sizedVolumes) {
            const full = await sb.exec('head -c 40000000 /dev/zero > big');
            expect(full.exitCode).not.toBe(0);
            expect(full.stderr).toMatch(/No space left/);
          }
        } finally {
          await sb.destroy();
        }
      }
    } finally {
      await backend.close();
      await pruneLayers(docker, scope, { all: true });
    }
    expect(await left(docker, backend)).toEqual({ holders: 0, containers: 0, volumes: [] });
  });
});
