import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type Docker from 'dockerode';
import { describe, expect, test } from 'vitest';
import { DEFAULT_LIMITS } from '../../harness/sandbox/core/limits.js';
import { dockerClient, profileOf } from '../../harness/sandbox/docker/client.js';
import { dockerLimits } from '../../harness/sandbox/docker/config.js';
import { DEFAULT_IMAGE, ensureImage } from '../../harness/sandbox/docker/image.js';
import { openLink, type ServerLink } from '../../harness/sandbox/docker/link.js';
import { packFiles } from '../../harness/sandbox/core/tar.js';
import { buildMiniImage } from '../helpers/docker-mini-image.js';
import { podmanClient } from '../../harness/sandbox/podman/client.js';
import { backendCases } from '../helpers/backends.js';
import { dockerUnavailableReason } from '../helpers/backends-docker.js';
import { withSandboxContainer, type StartedContainer } from '../helpers/docker-container.js';
import { REPO } from '../helpers/cli.js';

const unavailable = dockerUnavailableReason();
if (unavailable && process.env.CI) throw new Error(`CI must run the Docker backend's tests: ${unavailable}`);

/**
 * A sandbox container's command server speaks to the harness through FIFOs in a host folder
 * (link.ts) where the engine sees this host's files, and through the attach stream otherwise.
 * Either way the commands are the same; what the link must never do is reach a command, or stay.
 */
const engines = (await backendCases()).filter((c) => c.name === 'docker' || c.name === 'podman');
describe.each(engines)('$name: the link past the engine', ({ name: engine }) => {
  const client = () => (engine === 'podman' ? podmanClient() : dockerClient());

  /** A sandbox container of `image` (the runtime image) with the given link offer; removed after `use`. */
  const withContainer = async (
    docker: Docker,
    offer: (() => Promise<ServerLink>) | undefined,
    use: (started: StartedContainer) => Promise<void>,
    image = DEFAULT_IMAGE,
  ) => {
    const ref = (await ensureImage(docker, image)).ref;
    const name = `redgreen-test-link-${engine}-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
    const plan = {
      image: ref,
      volume: name,
      labels: { 'redgreen.test': 'link' },
      limits: dockerLimits(DEFAULT_LIMITS),
      ulimits: profileOf(docker).ulimits,
    };
    await withSandboxContainer(docker, plan, use, offer);
  };
  const run = async (started: StartedContainer, argv: string[], internal = false) =>
    (await started.server!.run({ argv, env: { PATH: '/usr/bin:/bin' }, cwd: '/workspace', internal })).result;

  test('the server speaks through it; its folder is gone from the host once the server has its ends, and a command finds nothing of it', async () => {
    let dir = '';
    const offer = async () => {
      const link = await openLink();
      dir = link.dir;
      return link;
    };
    await withContainer(client(), offer, async (started) => {
      expect(started.link).toBe('linked');
      expect(existsSync(path.dirname(dir))).toBe(false);
      // Output of both streams, big and small, and the exit code, as through the attach stream.
      const big = await run(started, ['sh', '-c', 'head -c 3000000 /dev/zero | tr "\\0" x; echo err >&2; exit 7']);
      expect({ code: big.exitCode, out: big.stdout.length, err: big.stderr }).toEqual({ code: 7, out: 3_000_000, err: 'err\n' });
      // The folder is empty for root too; the sandbox user cannot even list it.
      expect((await run(started, ['ls', '-A', '/redgreen-link'], true)).stdout).toBe('');
      const user = await run(started, [
        'sh',
        '-c',
        'ls -A /redgreen-link; cat /proc/1/fd/0 /proc/self/fd/0; exec 3>/proc/self/fd/1; echo still',
      ]);
      expect(user.stdout).toBe('still\n');
      expect(user.stderr).toMatch(/Permission denied/);
      // A kill request reaches the server through it.
      const killed = await started.server!.run({ argv: ['sleep', '30'], env: {}, cwd: '/workspace', timeoutMs: 300 });
      expect(killed.result.timedOut).toBe(true);
      expect((await run(started, ['echo', 'after'])).stdout).toBe('after\n');
    });
  });

  test('closing the server ends its input: the server exits and the container stops', async () => {
    const docker = client();
    await withContainer(docker, undefined, async (started) => {
      expect(started.link).toBe('linked');
      const stopped = started.container.wait();
      started.server!.close();
      expect((await stopped).StatusCode).toBe(0);
    });
  });

  test('the server gone (its container removed), a command fails with it', async () => {
    await withContainer(client(), undefined, async (started) => {
      expect(started.link).toBe('linked');
      await started.container.remove({ force: true });
      await expect(run(started, ['true'])).rejects.toMatchObject({ code: 'SANDBOX_FAILED' });
    });
  });

  test('FIFOs whose harness ends are not open (an engine that shows the folder, not this host): the server stays on the attach stream, and the engine is not offered a link again', async () => {
    const outer = mkdtempSync(path.join(os.tmpdir(), 'rg-link-test-'));
    let offers = 0;
    const offer = async (): Promise<ServerLink> => {
      offers++;
      const dir = path.join(outer, 'fifos');
      spawnSync('mkdir', ['-m', '0711', dir]);
      spawnSync('mkfifo', ['-m', '0666', ...['in', 'out', 'err'].map((n) => path.join(dir, n))]);
      return {
        dir,
        connect: () => {
          throw new Error('not to be connected');
        },
        release: () => rmSync(outer, { recursive: true, force: true }),
      };
    };
    const docker = client();
    await withContainer(docker, offer, async (started) => {
      expect(started.link).toBe('unreachable');
      expect((await run(started, ['sh', '-c', 'echo out; echo err >&2'])).stdout).toBe('out\n');
    });
    expect(existsSync(outer)).toBe(false);
    await withContainer(docker, offer, async (started) => expect(started.link).toBe('ignored'));
    expect(offers).toBe(1);
  });

  test("an image without the server's tools (a plain sleep, files through the archive API) is started without a link, then not offered one", async () => {
    const docker = client();
    const ref = `redgreen-test/mini:link${Math.random().toString(36).slice(2, 8)}`;
    await buildMiniImage(docker, ref);
    const derived = (await ensureImage(docker, ref)).ref;
    let offers = 0;
    const offer = () => {
      offers++;
      return openLink();
    };
    try {
      for (let n = 0; n < 2; n++) {
        await withContainer(
          docker,
          offer,
          async (started) => {
            expect(started).toMatchObject({ server: null, link: 'ignored' });
            // The archive API mounts every source again: none may be gone.
            await started.container.putArchive(await packFiles([{ name: 'a.txt', content: Buffer.from('a'), mode: 0o644 }]), {
              path: '/workspace',
            });
          },
          ref,
        );
      }
      expect(offers).toBe(1);
    } finally {
      for (const image of [derived, ref])
        await docker
          .getImage(image)
          .remove({ force: true })
          .catch(() => undefined);
    }
  });

  test('an engine that does not see the folder starts the sandbox without a link, and is not offered one again', async () => {
    const docker = client();
    let offers = 0;
    const missing = async (): Promise<ServerLink> => {
      offers++;
      const link = await openLink();
      link.release(); // the folder is gone, as on an engine that does not see this host's files
      // Podman makes a missing folder to mount (an empty one, where the server finds no FIFOs).
      return { dir: link.dir, connect: link.connect, release: () => rmSync(path.dirname(link.dir), { recursive: true, force: true }) };
    };
    await withContainer(docker, missing, async (started) => {
      expect(started.link).not.toBe('linked');
      expect((await run(started, ['echo', 'ok'])).stdout).toBe('ok\n');
    });
    await withContainer(docker, missing, async (started) => expect(started.link).not.toBe('linked'));
    // Docker refuses to mount it; Podman mounts an empty folder it made, where the server finds no FIFOs.
    expect(offers).toBe(1);
  });
});

describe('a link folder, whatever happens to the harness', () => {
  test('a harness exiting before the server took its ends (Ctrl-C while a container starts) leaves no folder', () => {
    const link = path.join(REPO, 'dist/sandbox/docker/link.js');
    const script = `const { openLink } = await import(${JSON.stringify(link)}); const l = await openLink(); console.log(l.dir); process.exit(130);`;
    const child = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
    expect(child.status).toBe(130);
    const dir = child.stdout.trim();
    expect(dir).toMatch(/rg-link-.*\/fifos$/);
    expect(existsSync(path.dirname(dir))).toBe(false);
  });
});
