import type Docker from 'dockerode';
import { RedgreenError } from '../../errors.js';
import { OWNER } from './archive.js';
import { engineFailure, profileOf, statusOf } from './client.js';
import { LAYOUT_LABEL, LAYOUT_VERSION, VOLUME_MOUNTS } from './config.js';
import { IMAGE_ROLES, LABEL, ownerLabels } from './labels.js';
import { packFiles } from '../core/tar.js';

/**
 * The default runtime image, built locally by `redgreen image build` (no registry involved).
 * Debian trixie, because its nodejs (20.19) is the first Debian Node that vitest 4 / vite 8
 * accept (they need ≥ 20.19; bookworm ships 18).
 */
export const DEFAULT_IMAGE = 'redgreen/runtime:trixie';
export const DEFAULT_SUITE = 'trixie';
export const RUNTIME_PACKAGES: readonly string[] = ['python3', 'python3-pytest', 'nodejs', 'npm', 'git', 'ca-certificates'];

const FALLBACK_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

export interface ImageInfo {
  /** What containers are created from: the image itself, or its layout-prepared derivative. */
  ref: string;
  id: string;
  /** The image's own PATH: commands in the container must not see the host's. */
  path: string;
  hasLayout: boolean;
}

export async function inspectImage(docker: Docker, name: string): Promise<ImageInfo | null> {
  try {
    const i = await docker.getImage(name).inspect();
    const pathVar = i.Config?.Env?.find((e) => e.startsWith('PATH='))?.slice(5);
    return { ref: name, id: i.Id, path: pathVar || FALLBACK_PATH, hasLayout: i.Config?.Labels?.[LAYOUT_LABEL] === LAYOUT_VERSION };
  } catch (e) {
    if (statusOf(e) === 404) return null;
    throw engineFailure(`inspect image ${name}`, e);
  }
}

/** redgreen's own images exist on no registry: they are built, never pulled. */
const isOwnImage = (name: string) => name.startsWith('redgreen/');

/**
 * The image a sandbox runs, pulled when missing (as `docker run` would) unless it is one of
 * redgreen's own, which can only be built. An image without the sandbox folders gets them once,
 * in a derived image (see withLayout). A failure says what to run.
 */
export async function ensureImage(docker: Docker, name: string): Promise<ImageInfo> {
  const found = (await inspectImage(docker, name)) ?? (await pull(docker, name));
  return found.hasLayout ? found : withLayout(docker, found);
}

async function pull(docker: Docker, name: string): Promise<ImageInfo> {
  const backend = profileOf(docker).backend;
  const build = backend === 'docker' ? '' : ` --backend ${backend}`;
  if (isOwnImage(name)) {
    throw new RedgreenError(
      'SANDBOX_FAILED',
      `the image ${name} does not exist on ${profileOf(docker).label}`,
      name === DEFAULT_IMAGE
        ? `build it once with \`npx redgreen image build${build}\` (a minute or two, from Debian packages)`
        : `build it (\`npx redgreen image build${build} --tag ${name}\`) or set the fixture's "image" to one that exists`,
    );
  }
  try {
    const stream = await docker.pull(name);
    await new Promise<void>((resolve, reject) =>
      docker.modem.followProgress(stream, (err: Error | null) => (err ? reject(err) : resolve())),
    );
  } catch (e) {
    throw new RedgreenError(
      'SANDBOX_FAILED',
      `the Docker image ${name} is not on this engine and could not be pulled: ${engineFailure('pull', e).message}`,
      `pull or build it on the engine (\`docker pull ${name}\`), or change the fixture's "image"`,
      { cause: e },
    );
  }
  const pulled = await inspectImage(docker, name);
  if (!pulled) throw new RedgreenError('SANDBOX_FAILED', `the Docker image ${name} is still missing after a pull`);
  return pulled;
}

/**
 * Any image can be a fixture's: its /workspace, /redgreen and /home/sandbox are added, owned by
 * the sandbox user, in a derived image committed once per image id (`redgreen/layout:<id>`).
 * Volumes copy their owner from the image's folder, so commands never need privileges to write.
 */
async function withLayout(docker: Docker, base: ImageInfo): Promise<ImageInfo> {
  const ref = `redgreen/layout:${base.id.replace(/^sha256:/, '').slice(0, 16)}`;
  const existing = await inspectImage(docker, ref);
  if (existing?.hasLayout) return existing;
  let container: Docker.Container | undefined;
  try {
    // Not started: the archive API writes into a created container's filesystem.
    const labels = { [LABEL.run]: 'image-layout', [LABEL.role]: 'image-build', ...ownerLabels() };
    container = await docker.createContainer({
      Image: base.ref,
      Entrypoint: ['/bin/sh'],
      Cmd: [],
      Labels: labels,
      HostConfig: { NetworkMode: 'none' },
    });
    // Only the mount points themselves: an entry for an existing parent (/home) would change its owner.
    await container.putArchive(await packFiles([], { owner: OWNER, dirs: VOLUME_MOUNTS.map(([mount]) => mount.slice(1)) }), { path: '/' });
    const [repo, tag] = ref.split(':') as [string, string];
    await container.commit({
      repo,
      tag,
      changes: [`LABEL ${LAYOUT_LABEL}=${LAYOUT_VERSION}`, `LABEL ${LABEL.role}=${IMAGE_ROLES.layout}`],
    });
  } catch (e) {
    throw engineFailure(`prepare image ${base.ref} for sandboxes`, e);
  } finally {
    await container?.remove({ force: true }).catch(() => undefined);
  }
  const made = await inspectImage(docker, ref);
  if (!made) throw new RedgreenError('SANDBOX_FAILED', `docker: the derived image ${ref} is missing after commit`);
  return { ...made, path: base.path };
}
