import { randomBytes } from 'node:crypto';
import { mkdtemp } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type Docker from 'dockerode';
import { execa } from 'execa';
import { RedgreenError } from '../../errors.js';
import { dockerClient, engineFailure, pingEngine, profileOf } from './client.js';
import { HOME_DIR, LAYOUT_LABEL, LAYOUT_VERSION, SANDBOX_GID, SANDBOX_UID, VOLUME_MOUNTS } from './config.js';
import { assertCanBootstrap, debootstrap, hostDebianMirror, removeRootfs } from './debootstrap.js';
import { DEFAULT_IMAGE, DEFAULT_SUITE, inspectImage, RUNTIME_PACKAGES } from './image.js';
import { IMAGE_ROLES, LABEL, ownerLabels } from './labels.js';
import { resolveBuildNetwork } from './network.js';
import { ExecOutput } from './stream.js';

export interface BuildImageOptions {
  tag?: string;
  suite?: string;
  /** A Debian archive URL; default: the one this machine's apt uses, else deb.debian.org. */
  mirror?: string;
  /** Rebuild even when the tag exists. */
  force?: boolean;
  /** Network of the install step (default: bridge when the engine has one, else host). */
  network?: string;
  log: (line: string) => void;
  signal?: AbortSignal;
  docker?: Docker;
}

export interface BuildImageResult {
  tag: string;
  id: string;
  built: boolean;
  /** Tool versions inside the image, as printed by the install step. */
  versions: string;
}

/**
 * Installs the runtime packages with apt (debootstrap alone cannot resolve npm's dependencies),
 * adds the unprivileged sandbox user and the folders its volumes are mounted on (owned by it),
 * refuses a Node older than vitest 4 accepts, and cleans up.
 */
const INSTALL = (packages: readonly string[]) => `set -eu
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
apt-get install -y -q --no-install-recommends ${packages.join(' ')}
groupadd -g ${SANDBOX_GID} sandbox
useradd -u ${SANDBOX_UID} -g ${SANDBOX_GID} -M -d ${HOME_DIR} -s /bin/sh sandbox
install -d -o ${SANDBOX_UID} -g ${SANDBOX_GID} -m 0755 ${VOLUME_MOUNTS.map(([m]) => m).join(' ')}
node -e 'const [a, b] = process.versions.node.split(".").map(Number); if (a < 20 || (a === 20 && b < 19)) { console.error("node " + process.version + " is older than 20.19"); process.exit(1) }'
apt-get clean
rm -rf /var/lib/apt/lists/* /var/cache/apt/*.bin /var/log/apt /var/log/dpkg.log
echo "versions: node $(node --version), npm $(npm --version), $(python3 --version), pytest $(python3 -m pytest --version 2>&1 | sed 's/^pytest //'), $(git --version)"`;

function splitRef(ref: string): { repo: string; tag: string } {
  const at = ref.lastIndexOf(':');
  return at > ref.lastIndexOf('/') ? { repo: ref.slice(0, at), tag: ref.slice(at + 1) } : { repo: ref, tag: 'latest' };
}

/**
 * `redgreen image build`: the default runtime image from Debian packages, no registry needed —
 * debootstrap a minimal Debian, `docker import` it, install the runtimes with apt in a build
 * container, and commit that as the tag. An existing tag is reused unless `force`, or unless it
 * lacks the layout label (an image committed before Podman's labels were written one a line).
 */
export async function buildRuntimeImage(o: BuildImageOptions): Promise<BuildImageResult> {
  const docker = o.docker ?? dockerClient();
  const ref = o.tag ?? DEFAULT_IMAGE;
  await pingEngine(docker);
  const existing = await inspectImage(docker, ref);
  if (existing?.hasLayout && !o.force) return { tag: ref, id: existing.id, built: false, versions: '' };
  await assertCanBootstrap();
  const suite = o.suite ?? DEFAULT_SUITE;
  const mirror = o.mirror ?? (await hostDebianMirror());
  const { repo, tag } = splitRef(ref);
  const stageRef = `${repo}:stage-${randomBytes(4).toString('hex')}`;
  const labels = { [LABEL.run]: `image-build-${tag}`, ...ownerLabels() };
  const tmp = await mkdtemp(path.join(os.tmpdir(), 'redgreen-rootfs-'));
  const rootfs = path.join(tmp, 'rootfs');
  let container: Docker.Container | null = null;
  let staged = false;
  try {
    o.log(`debootstrap ${suite} from ${mirror} …`);
    await debootstrap({ suite, target: rootfs, mirror, log: (l) => o.log(`  ${l}`), ...(o.signal ? { signal: o.signal } : {}) });
    o.log(`docker import → ${stageRef}`);
    await importTree(docker, rootfs, stageRef, { ...labels, [LABEL.role]: 'image-stage' });
    staged = true;
    await removeRootfs(tmp, o.log);
    const network = await resolveBuildNetwork(docker, o.network);
    const { ulimits } = profileOf(docker);
    o.log(`apt-get install ${RUNTIME_PACKAGES.join(' ')} (network: ${network}) …`);
    container = await docker.createContainer({
      name: `redgreen-image-build-${randomBytes(4).toString('hex')}`,
      Image: stageRef,
      User: '0:0',
      Cmd: ['/bin/sh', '-c', INSTALL(RUNTIME_PACKAGES)],
      Labels: { ...labels, [LABEL.role]: 'image-build' },
      HostConfig: { NetworkMode: network, LogConfig: { Type: 'none', Config: {} }, ...(ulimits ? { Ulimits: ulimits } : {}) },
    });
    const status = await runLogged(docker, container, o.log, o.signal);
    if (status.code !== 0) {
      throw new RedgreenError(
        'SANDBOX_FAILED',
        `installing the runtime packages failed (exit ${status.code}):\n${status.tail}`,
        'check the mirror (--mirror) and the network of the build step (--network)',
      );
    }
    const image = (await container.commit({
      repo,
      tag,
      changes: [
        'ENV LANG=C.UTF-8',
        `ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin`,
        // One label a line: Podman's commit reads only the first pair of a LABEL line.
        `LABEL ${LABEL.role}=${IMAGE_ROLES.runtime}`,
        `LABEL redgreen.suite=${suite}`,
        `LABEL ${LAYOUT_LABEL}=${LAYOUT_VERSION}`,
        'CMD ["sleep", "2147483647"]',
      ],
    })) as { Id?: string };
    return { tag: ref, id: image.Id ?? '', built: true, versions: status.versions };
  } catch (e) {
    throw engineFailure('image build', e);
  } finally {
    await container?.remove({ force: true }).catch(() => undefined);
    // The committed image keeps the stage as its parent layer; only the temporary tag goes.
    if (staged)
      await docker
        .getImage(stageRef)
        .remove()
        .catch(() => undefined);
    await removeRootfs(tmp, o.log).catch(() => undefined);
  }
}

/** `tar -c` of the tree into `docker import`, labelled so `gc` can remove it if the build dies. */
async function importTree(docker: Docker, dir: string, ref: string, labels: Record<string, string>): Promise<void> {
  const tar = execa('tar', ['--numeric-owner', '-C', dir, '--exclude=./proc/*', '--exclude=./sys/*', '--exclude=./dev/*', '-c', '.'], {
    buffer: false,
    stderr: 'pipe',
    reject: false,
  });
  const changes = Object.entries(labels).map(([k, v]) => `LABEL ${k}=${JSON.stringify(v)}`);
  // The whole reference as `repo` (the Engine API allows a tag there): Podman ignores `tag`.
  const progress = await docker.importImage(tar.stdout!, { repo: ref, changes } as unknown as object);
  await new Promise<void>((resolve, reject) =>
    docker.modem.followProgress(progress, (err: Error | null) => (err ? reject(err) : resolve())),
  );
  const r = await tar;
  if (r.exitCode !== 0) throw new RedgreenError('SANDBOX_FAILED', `tar of the bootstrapped tree failed (exit ${r.exitCode})`);
}

/** Runs a created container to its end, its output going to `log`; returns the exit code and last lines. */
async function runLogged(docker: Docker, container: Docker.Container, log: (l: string) => void, signal?: AbortSignal) {
  const stream = await container.attach({ stream: true, stdout: true, stderr: true, hijack: true });
  let partial = '';
  const tail: string[] = [];
  let versions = '';
  const out = new ExecOutput(docker, stream, 64 * 1024, (_s, chunk) => {
    const lines = (partial + chunk.toString('utf8')).split('\n');
    partial = lines.pop() ?? '';
    for (const line of lines) {
      if (line.startsWith('versions: ')) versions = line.slice(10);
      log(`  ${line}`);
      tail.push(line);
      if (tail.length > 15) tail.shift();
    }
  });
  const onAbort = () => void container.kill().catch(() => undefined);
  signal?.addEventListener('abort', onAbort, { once: true });
  try {
    await container.start();
    // After start, "not-running" is either now (it already ended) or when it ends.
    const status = (await container.wait({ condition: 'not-running' })) as { StatusCode: number };
    await out.ended;
    return { code: status.StatusCode, tail: tail.join('\n'), versions };
  } finally {
    signal?.removeEventListener('abort', onAbort);
  }
}
