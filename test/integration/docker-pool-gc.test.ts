import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { dockerClient } from '../../harness/sandbox/docker/client.js';
import { LINK_FOLDER_PREFIX, ownedFolderPrefix } from '../../harness/sandbox/core/owner.js';
import { volumeNames } from '../../harness/sandbox/docker/config.js';
import { collectGarbage } from '../../harness/sandbox/docker/gc.js';
import { DEFAULT_IMAGE } from '../../harness/sandbox/docker/image.js';
import { currentOwner, IMAGE_ROLES, LABEL, ownerLabels } from '../../harness/sandbox/docker/labels.js';
import { DockerBackend } from '../../harness/sandbox/docker/backend.js';
import { LAYER_LABEL, listLayers, SCOPE_LABEL } from '../../harness/sandbox/docker/layers.js';
import { podmanClient } from '../../harness/sandbox/podman/client.js';
import { backendCases } from '../helpers/backends.js';
import { spawnCli } from '../helpers/cli.js';
import { dockerTestOptions, dockerUnavailableReason } from '../helpers/backends-docker.js';

const unavailable = dockerUnavailableReason();
if (unavailable && process.env.CI) throw new Error(`CI must run the Docker backend's tests: ${unavailable}`);

describe.skipIf(unavailable)('docker warm pool, close and gc', () => {
  const docker = dockerClient();
  const leftovers = (label: string) =>
    Promise.all([
      docker.listContainers({ all: true, filters: { label: [label] } }),
      docker.listVolumes({ filters: { label: [label] } }).then((v) => v.Volumes ?? []),
    ]);

  test('the pool hands out containers it started ahead of demand; within a run a destroyed sandbox’s container is reset and handed out again; close() removes them all', async () => {
    const backend = new DockerBackend(dockerTestOptions({ pool: 2 }));
    try {
      // The run starts once the first container is ready; the second is made meanwhile.
      await backend.open('pool-test');
      expect(backend.pooled).toBeGreaterThanOrEqual(1);
      const [a, b] = [
        await backend.create({ runId: 'pool-test', fixtureId: 'f0' }),
        await backend.create({ runId: 'pool-test', fixtureId: 'f1' }),
      ];
      // Made by the pool before the fixture asked (how fast a hand-out is: `npm run bench`).
      for (const sb of [a, b]) expect((await docker.getContainer(sb.id).inspect()).Config.Labels[LABEL.role]).toBe('pool');
      expect(a.id).not.toBe(b.id);
      expect((await a.exec('echo kept > f && echo ready')).stdout).toBe('ready\n');
      await a.destroy();
      // The next sandbox gets the container a had, emptied; b's is still its own.
      const c = await backend.create({ runId: 'pool-test', fixtureId: 'f2' });
      expect(c.id).toBe(a.id);
      expect((await c.exec('ls -A; echo end')).stdout).toBe('end\n');
      await Promise.all([b.destroy(), c.destroy()]);
    } finally {
      await backend.close();
    }
    const [containers, volumes] = await leftovers(`${LABEL.session}=${backend.session}`);
    expect(containers).toEqual([]);
    expect(volumes).toEqual([]);
    await expect(backend.create({ runId: 'pool-test', fixtureId: 'late' })).rejects.toMatchObject({ code: 'SANDBOX_FAILED' });
  });

  test("a pool told the run's sandboxes (open's plan) starts no container that no fixture takes", async () => {
    const since = Math.floor(Date.now() / 1000) - 1;
    const backend = new DockerBackend(dockerTestOptions({ pool: 4 }));
    try {
      await backend.open('plan-test', { sandboxes: 1 });
      const sb = await backend.create({ runId: 'plan-test', fixtureId: 'only' });
      expect((await docker.getContainer(sb.id).inspect()).Config.Labels[LABEL.role]).toBe('pool');
      await sb.destroy();
    } finally {
      await backend.close();
    }
    // The engine's own record of what was created for this backend's pool (the events up to now).
    const events = await docker.getEvents({
      since,
      until: Math.ceil(Date.now() / 1000),
      filters: { type: ['container'], event: ['create'], label: [`${LABEL.session}=${backend.session}`, `${LABEL.role}=pool`] },
    });
    let text = '';
    for await (const chunk of events) text += String(chunk);
    expect(text.trim().split('\n').filter(Boolean)).toHaveLength(1);
  });

  test('a container serves at most maxUses sandboxes of a run; outside a run it serves one', async () => {
    const backend = new DockerBackend(dockerTestOptions({ maxUses: 2 }));
    try {
      await backend.open('reuse-test');
      const ids: string[] = [];
      for (let i = 0; i < 3; i++) {
        const sb = await backend.create({ runId: 'reuse-test', fixtureId: `f${i}` });
        ids.push(sb.id);
        await sb.destroy();
      }
      expect(ids[1]).toBe(ids[0]);
      expect(ids[2]).not.toBe(ids[0]);
      // The container that served its two sandboxes is gone with its volumes.
      await expect(docker.getContainer(ids[0]!).inspect()).rejects.toMatchObject({ statusCode: 404 });
      expect((await leftovers(`${LABEL.session}=${backend.session}`))[1].map((v) => v.Name).filter((n) => n.startsWith(ids[0]!))).toEqual(
        [],
      );
    } finally {
      await backend.close();
    }
    const outside = new DockerBackend(dockerTestOptions());
    try {
      const first = await outside.create({ runId: 'no-run', fixtureId: 'a' });
      await first.destroy();
      const second = await outside.create({ runId: 'no-run', fixtureId: 'b' });
      expect(second.id).not.toBe(first.id);
      await second.destroy();
    } finally {
      await outside.close();
    }
  });

  test('close() removes what a sandbox left when it was never destroyed', async () => {
    const backend = new DockerBackend(dockerTestOptions());
    await backend.create({ runId: 'close-test', fixtureId: 'forgotten' });
    await backend.close();
    const [containers, volumes] = await leftovers(`${LABEL.session}=${backend.session}`);
    expect(containers).toEqual([]);
    expect(volumes).toEqual([]);
  });

  describe('gc', () => {
    // A pid that is certainly not running any more: a child that has already exited.
    const deadPid = spawnSync('true').pid!;
    const run = `gc-test-${Math.random().toString(36).slice(2, 8)}`;
    const dead = { ...ownerLabels({ host: os.hostname(), pid: deadPid, start: 'gone' }), [LABEL.run]: run };
    // Never touch another host's real objects on a shared engine: the remote case is scoped to this test's run.
    const elsewhere = { ...ownerLabels({ host: 'another-host.invalid', pid: 1, start: 'x' }), [LABEL.run]: run };
    const alive = { ...ownerLabels(currentOwner()), [LABEL.run]: run };
    const made: string[] = [];
    async function leftover(name: string, labels: Record<string, string>) {
      made.push(name);
      await Promise.all(volumeNames(name).map((Name) => docker.createVolume({ Name, Labels: labels })));
      await docker.createContainer({
        name,
        Image: DEFAULT_IMAGE,
        Entrypoint: ['true'],
        // A role of its own, as every container redgreen makes has (what it inherits from the image says runtime-image).
        Labels: { [LABEL.role]: 'sandbox', ...labels },
        HostConfig: { NetworkMode: 'none', Mounts: volumeNames(name).map((v, i) => ({ Type: 'volume', Source: v, Target: `/m${i}` })) },
      });
    }
    afterAll(async () => {
      for (const name of made) {
        await docker
          .getContainer(name)
          .remove({ force: true })
          .catch(() => undefined);
        for (const v of volumeNames(name))
          await docker
            .getVolume(v)
            .remove()
            .catch(() => undefined);
      }
    });

    test('removes the containers and volumes of dead runs only; other hosts only with allHosts', async () => {
      const tag = Math.random().toString(36).slice(2, 8);
      await leftover(`redgreen-gc-dead-${tag}`, dead);
      await leftover(`redgreen-gc-live-${tag}`, alive);
      await leftover(`redgreen-gc-remote-${tag}`, elsewhere);
      const names = (items: { name: string }[]) =>
        items
          .map((i) => i.name)
          .filter((n) => n.endsWith(tag) || n.includes(`${tag}-`))
          .sort();

      // Other test files open runs on the same engine at the same time, and a run's open collects every dead
      // run's leftovers: the dead ones may go by someone else's hand. What stays is never theirs to take.
      const deadOnes = [`redgreen-gc-dead-${tag}`, ...volumeNames(`redgreen-gc-dead-${tag}`)].sort();
      const stillThere = async () =>
        await docker
          .getContainer(`redgreen-gc-dead-${tag}`)
          .inspect()
          .then(
            () => true,
            () => false,
          );
      const dry = await collectGarbage(docker, { dryRun: true });
      expect(names(dry.removed).filter((n) => !deadOnes.includes(n))).toEqual([]);
      if (await stillThere()) expect(names(dry.removed)).toEqual(deadOnes);

      const r = await collectGarbage(docker);
      expect(names(r.removed).filter((n) => !deadOnes.includes(n))).toEqual([]);
      expect(await stillThere()).toBe(false);
      expect(names(r.kept.filter((k) => k.reason === 'alive'))).toContain(`redgreen-gc-live-${tag}`);
      expect(names(r.kept.filter((k) => k.reason === 'other-host'))).toContain(`redgreen-gc-remote-${tag}`);
      await expect(docker.getVolume(`redgreen-gc-dead-${tag}-ws`).inspect()).rejects.toMatchObject({ statusCode: 404 });

      const all = await collectGarbage(docker, { allHosts: true, match: { [LABEL.run]: run } });
      expect(names(all.removed)).toEqual([`redgreen-gc-remote-${tag}`, ...volumeNames(`redgreen-gc-remote-${tag}`)].sort());
      await expect(docker.getContainer(`redgreen-gc-live-${tag}`).inspect()).resolves.toBeTruthy();
    });

    test("a container someone made from a redgreen image is not a leftover, though it inherits the labels of the image's build", async () => {
      const name = `redgreen-gc-users-${Math.random().toString(36).slice(2, 8)}`;
      made.push(name);
      // As `docker run redgreen/runtime:trixie` makes it: no labels of its own, the image's build's labels (its run, its dead owner) inherited.
      const inherited = { ...dead, [LABEL.role]: IMAGE_ROLES.runtime };
      await docker.createContainer({
        name,
        Image: DEFAULT_IMAGE,
        Entrypoint: ['true'],
        Labels: inherited,
        HostConfig: { NetworkMode: 'none' },
      });
      const r = await collectGarbage(docker, { match: { [LABEL.run]: run } });
      expect([...r.removed, ...r.failed].map((i) => i.name)).not.toContain(name);
      await expect(docker.getContainer(name).inspect()).resolves.toBeTruthy();
      const image = await docker.getImage(DEFAULT_IMAGE).inspect();
      if (image.Config.Labels?.[LABEL.run]) expect(image.Config.Labels[LABEL.role]).toBe(IMAGE_ROLES.runtime);
    });

    test('`redgreen gc --backend docker` also removes the link folders dead harnesses left on this host, and no host sandbox', async () => {
      const base = mkdtempSync(path.join(os.tmpdir(), 'rg-gc-test-'));
      try {
        const deadOwner = { host: os.hostname(), pid: deadPid, start: 'boot:1' };
        const deadLink = path.join(base, `${ownedFolderPrefix(LINK_FOLDER_PREFIX, deadOwner)}abc`);
        const liveLink = path.join(base, `${ownedFolderPrefix(LINK_FOLDER_PREFIX)}abc`);
        // A dead harness's host sandbox: the gc of local and bwrap takes that, not the engine's.
        const sandbox = path.join(base, 'redgreen-gc-sandbox');
        for (const f of [deadLink, liveLink, sandbox]) mkdirSync(f);
        writeFileSync(path.join(sandbox, 'owner.json'), JSON.stringify({ ...deadOwner, sandboxId: 'x', runId: run }));
        const gc = (...extra: string[]) => spawnCli(['gc', '--backend', 'docker', ...extra], { env: { TMPDIR: base } }).result;

        const dry = await gc('--dry-run', '--json');
        expect(dry.code).toBe(0);
        expect((JSON.parse(dry.stdout) as { linkFolders: string[] }).linkFolders).toEqual([deadLink]);
        expect(existsSync(deadLink)).toBe(true);

        const real = await gc();
        expect(real.code).toBe(0);
        expect(real.stdout).toContain(`removed link folder ${deadLink}`);
        expect(real.stdout).toMatch(/and 1 link folder\(s\)/);
        expect([existsSync(deadLink), existsSync(liveLink), existsSync(sandbox)]).toEqual([false, true, true]);
      } finally {
        rmSync(base, { recursive: true, force: true });
      }
    });

    test('a run removes dead runs’ leftovers when it opens', async () => {
      const name = `redgreen-gc-open-${Math.random().toString(36).slice(2, 8)}`;
      await leftover(name, dead);
      const backend = new DockerBackend(dockerTestOptions());
      try {
        await backend.open('open-test');
        // Gone once open returns (another file's run opening at the same time may be the one that took it).
        await expect(docker.getContainer(name).inspect()).rejects.toMatchObject({ statusCode: 404 });
      } finally {
        await backend.close();
      }
    });
  });
});

/** Both engines: what a sandbox leaves once destroyed, in a run (reused, then removed at close) and outside one (removed at once). */
const engines = (await backendCases()).filter((c) => c.name === 'docker' || c.name === 'podman');
describe.each(engines)('$name: nothing is left', ({ name, make }) => {
  test('after destroy outside a run, and after close within one (a reused container included)', async () => {
    const backend = (await make()) as DockerBackend;
    const client = name === 'podman' ? podmanClient() : dockerClient();
    const mine = async () => {
      const label = [`${LABEL.session}=${backend.session}`];
      const [containers, volumes] = await Promise.all([
        client.listContainers({ all: true, filters: { label } }),
        client.listVolumes({ filters: { label } }).then((v) => v.Volumes ?? []),
      ]);
      return [...containers.map((c) => c.Names[0]), ...volumes.map((v) => v.Name)];
    };
    try {
      for (const id of ['x', 'y', 'z']) {
        const once = await backend.create({ runId: 'leftovers', fixtureId: id });
        await once.exec('echo x > f');
        await once.destroy();
        expect(await mine()).toEqual([]);
      }
      await backend.open('leftovers');
      for (const id of ['a', 'b']) {
        const sb = await backend.create({ runId: 'leftovers', fixtureId: id });
        await sb.exec('echo x > f');
        await sb.destroy();
      }
    } finally {
      await backend.close();
    }
    expect(await mine()).toEqual([]);
  });

  test("a run's close and a cache's layer listing take what carries all their labels, not what carries one (Podman 4 and 5 join a volume listing's label filters with OR)", async () => {
    const client = name === 'podman' ? podmanClient() : dockerClient();
    const tag = randomBytes(4).toString('hex');
    // Another live run's volume, made and not yet mounted (a sandbox between its volumes and its container).
    const other = `redgreen-sb-other-${tag}-home`;
    const scope = `test-${tag}`;
    const otherLayer = `redgreen-layer-other-${tag}`;
    await client.createVolume({
      Name: other,
      Labels: { ...ownerLabels(currentOwner()), [LABEL.run]: 'other', [LABEL.session]: `other-${tag}` },
    });
    await client.createVolume({ Name: otherLayer, Labels: { [LAYER_LABEL]: `other-${tag}`, [SCOPE_LABEL]: `another-${tag}` } });
    const backend = (await make()) as DockerBackend;
    try {
      const sb = await backend.create({ runId: 'own-labels', fixtureId: 'x' });
      await sb.destroy();
      await backend.close();
      await expect(client.getVolume(other).inspect()).resolves.toMatchObject({ Name: other });
      expect(await listLayers(client, scope)).toEqual([]);
    } finally {
      for (const v of [other, otherLayer])
        await client
          .getVolume(v)
          .remove()
          .catch(() => undefined);
    }
  });

  test("the host's CA bundles: the same bytes in every sandbox, read-only, not sent again at a reset, gone at close", async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'rg-ca-'));
    const bundle = path.join(dir, 'corp-ca.pem');
    writeFileSync(bundle, `-----BEGIN CERTIFICATE-----\n${randomBytes(48).toString('base64')}\n-----END CERTIFICATE-----\n`);
    const saved = { NODE_EXTRA_CA_CERTS: process.env.NODE_EXTRA_CA_CERTS, SSL_CERT_FILE: process.env.SSL_CERT_FILE };
    process.env.NODE_EXTRA_CA_CERTS = bundle;
    process.env.SSL_CERT_FILE = bundle;
    const backend = (await make()) as DockerBackend;
    const client = name === 'podman' ? podmanClient() : dockerClient();
    const volumes = async () =>
      ((await client.listVolumes({ filters: { label: [`${LABEL.session}=${backend.session}`] } })).Volumes ?? []).map((v) => v.Name);
    const look =
      'echo "$NODE_EXTRA_CA_CERTS $SSL_CERT_FILE"; cat "$SSL_CERT_FILE"; echo changed > "$SSL_CERT_FILE" 2>/dev/null || echo read-only; ls -A /redgreen';
    try {
      // Outside a run: the sandbox's own copy, gone with it.
      const once = await backend.create({ runId: 'ca', fixtureId: 'once' });
      const seen = await once.exec(look);
      expect(seen.stdout).toBe(`/redgreen-ca/0-corp-ca.pem /redgreen-ca/0-corp-ca.pem\n${readFileSync(bundle, 'utf8')}read-only\n`);
      await once.destroy();
      expect(await volumes()).toEqual([]);
      // Within a run: one copy for every container, still there after a reset, removed at close.
      await backend.open('ca');
      const ids: string[] = [];
      for (const id of ['a', 'b']) {
        const sb = await backend.create({ runId: 'ca', fixtureId: id });
        ids.push(sb.id);
        expect((await sb.exec(look)).stdout).toBe(seen.stdout);
        await sb.destroy();
      }
      expect(ids[1]).toBe(ids[0]);
    } finally {
      await backend.close();
      Object.assign(process.env, saved);
      rmSync(dir, { recursive: true, force: true });
    }
    expect(await volumes()).toEqual([]);
  });

  test("a run's warm pool, made while the run opens, shares the run's one CA volume", async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'rg-ca-'));
    const bundle = path.join(dir, 'corp-ca.pem');
    writeFileSync(bundle, `-----BEGIN CERTIFICATE-----\n${randomBytes(48).toString('base64')}\n-----END CERTIFICATE-----\n`);
    const saved = process.env.SSL_CERT_FILE;
    process.env.SSL_CERT_FILE = bundle;
    const client = name === 'podman' ? podmanClient() : dockerClient();
    const backend = new DockerBackend(dockerTestOptions({ pool: 3, ...(name === 'podman' ? { docker: client, name: 'podman' } : {}) }));
    const volumes = async () =>
      ((await client.listVolumes({ filters: { label: [`${LABEL.session}=${backend.session}`] } })).Volumes ?? []).map((v) => v.Name);
    try {
      await backend.open('ca-pool');
      const sandboxes = [0, 1, 2].map((i) => backend.create({ runId: 'ca-pool', fixtureId: `p${i}` }));
      for (const sb of await Promise.all(sandboxes)) {
        expect((await sb.exec('cat "$SSL_CERT_FILE"')).stdout).toBe(readFileSync(bundle, 'utf8'));
        await sb.destroy();
      }
      // Each container has its three volumes; the CA bundles' volume is one for the run.
      expect((await volumes()).filter((v) => !/-(ws|scratch|home)$/.test(v))).toHaveLength(1);
    } finally {
      await backend.close();
      if (saved === undefined) delete process.env.SSL_CERT_FILE;
      else process.env.SSL_CERT_FILE = saved;
      rmSync(dir, { recursive: true, force: true });
    }
    expect(await volumes()).toEqual([]);
  });
});
