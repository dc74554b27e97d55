import Docker from 'dockerode';
import { afterAll, describe, expect, test } from 'vitest';
import { dockerClient } from '../../harness/sandbox/docker/client.js';
import { buildRuntimeImage } from '../../harness/sandbox/docker/image-build.js';
import { DEFAULT_IMAGE, ensureImage, inspectImage } from '../../harness/sandbox/docker/image.js';
import { DockerBackend } from '../../harness/sandbox/docker/backend.js';
import { dockerTestOptions, dockerUnavailableReason } from '../helpers/backends-docker.js';
import { buildMiniImage } from '../helpers/docker-mini-image.js';
import { backendCases } from '../helpers/backends.js';
import { podmanClient } from '../../harness/sandbox/podman/client.js';

const unavailable = dockerUnavailableReason();
if (unavailable && process.env.CI) throw new Error(`CI must run the Docker backend's tests: ${unavailable}`);

describe.skipIf(unavailable)('docker images', () => {
  const docker = dockerClient();
  const removeAfter: string[] = [];
  afterAll(async () => {
    for (const ref of removeAfter.reverse())
      await docker
        .getImage(ref)
        .remove({ force: true })
        .catch(() => undefined);
  });

  test('`image build` reuses an existing image instead of rebuilding it', async () => {
    const lines: string[] = [];
    const r = await buildRuntimeImage({ log: (l) => lines.push(l), docker });
    expect(r).toMatchObject({ tag: DEFAULT_IMAGE, built: false });
    expect(lines).toEqual([]);
  });

  test('the runtime image has what the bundled fixtures need: Node ≥ 20.19, npm, python3 with pytest, git', async () => {
    const backend = new DockerBackend(dockerTestOptions());
    const sb = await backend.create({ runId: 'image-test', fixtureId: 'versions' });
    try {
      const r = await sb.exec(
        'node -p process.versions.node; npm --version >/dev/null && python3 -m pytest --version && git --version >/dev/null && echo ok',
      );
      const [major, minor] = r.stdout.split('\n')[0]!.split('.').map(Number) as [number, number];
      expect(major > 20 || (major === 20 && minor >= 19)).toBe(true);
      expect(r.stdout).toMatch(/pytest \d+.*\nok\n$/s);
    } finally {
      await sb.destroy();
      await backend.close();
    }
  });

  test('any image works: its folders are added once in a derived image, its entrypoint is not used', async () => {
    const ref = `redgreen-test/mini:${Math.random().toString(36).slice(2, 8)}`;
    await buildMiniImage(docker, ref);
    removeAfter.push(ref);
    const derived = await ensureImage(docker, ref);
    removeAfter.push(derived.ref);
    expect(derived.ref).toMatch(/^redgreen\/layout:/);
    expect(derived.path).toBe('/bin');
    const backend = new DockerBackend(dockerTestOptions());
    const sb = await backend.create({ runId: 'image-test', fixtureId: 'mini', image: ref });
    try {
      await sb.writeFiles([{ path: 'a.txt', content: 'from the host' }]);
      expect((await sb.exec('cat a.txt; echo " $HOME"')).stdout).toBe('from the host /home/sandbox\n');
      expect((await sb.readFile('a.txt')).toString()).toBe('from the host');
    } finally {
      await sb.destroy();
      await backend.close();
    }
    expect((await inspectImage(docker, derived.ref))?.hasLayout).toBe(true);
  });

  test('a missing redgreen image, or an engine that does not answer, is an error that says what to run', async () => {
    await expect(ensureImage(docker, 'redgreen/runtime:no-such-tag')).rejects.toMatchObject({
      code: 'SANDBOX_FAILED',
      hint: expect.stringContaining('npx redgreen image build'),
    });
    const nowhere = new Docker({ socketPath: '/nonexistent/redgreen-docker.sock' });
    const backend = new DockerBackend({ docker: nowhere });
    await expect(backend.create({ runId: 'image-test', fixtureId: 'x' })).rejects.toMatchObject({
      code: 'SANDBOX_FAILED',
      hint: expect.stringContaining('DOCKER_HOST'),
    });
  });
});

/** Labels are how an image is known again (Podman reads one pair a LABEL line): on both engines. */
const engines = (await backendCases()).filter((c) => c.name === 'docker' || c.name === 'podman');
describe.each(engines)('$name: images are known again by their labels', ({ name }) => {
  test('the runtime image is used as built, and any other image gets one derived image, made once', async () => {
    const client = name === 'podman' ? podmanClient() : dockerClient();
    const runtime = await ensureImage(client, DEFAULT_IMAGE);
    expect(runtime).toMatchObject({ ref: DEFAULT_IMAGE, hasLayout: true });
    const ref = `redgreen-test/mini:${Math.random().toString(36).slice(2, 8)}`;
    await buildMiniImage(client, ref);
    let derived: string | undefined;
    try {
      const first = await ensureImage(client, ref);
      derived = first.ref;
      const again = await ensureImage(client, ref);
      expect(again).toMatchObject({ ref: first.ref, id: first.id, hasLayout: true });
    } finally {
      for (const r of [derived, ref])
        if (r)
          await client
            .getImage(r)
            .remove({ force: true })
            .catch(() => undefined);
    }
  });
});
