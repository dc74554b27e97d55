import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type Docker from 'dockerode';
import { packFiles, type TarFile } from '../core/tar.js';
import { CA_MOUNT, mount } from './config.js';

/**
 * Variables naming a CA bundle file, which the local backend passes through: behind a
 * TLS-inspecting proxy they are what makes npm and pip trust it. A host path means nothing in a
 * container, so each bundle is copied into a volume of the backend's, mounted read-only in every
 * container at CA_MOUNT, and the variable points at the copy. Read-only, it needs no putting back
 * after a sandbox: a reset sends nothing, and no sandbox can change what the next one trusts.
 */
export const CA_FILE_VARS: readonly string[] = ['NODE_EXTRA_CA_CERTS', 'SSL_CERT_FILE', 'REQUESTS_CA_BUNDLE', 'PIP_CERT'];

export interface CaBundles {
  /** Variable → path inside the sandbox. */
  env: Record<string, string>;
  /** An archive of the copies, named from the volume's root (root's, mode 0644); null when the host names none. */
  archive: Buffer | null;
}

/** Reads the bundles the host's variables name (unreadable ones are left out, as a missing variable would be). */
export async function hostCaBundles(host: NodeJS.ProcessEnv): Promise<CaBundles> {
  const byHostPath = new Map<string, string>();
  const env: Record<string, string> = {};
  const files: TarFile[] = [];
  for (const name of CA_FILE_VARS) {
    const hostPath = host[name];
    if (!hostPath || !path.isAbsolute(hostPath)) continue;
    let inside = byHostPath.get(hostPath);
    if (!inside) {
      const content = await readFile(hostPath).catch(() => null);
      if (!content) continue;
      const rel = `${files.length}-${path.basename(hostPath)}`;
      files.push({ name: rel, content, mode: 0o644 });
      inside = `${CA_MOUNT}/${rel}`;
      byHostPath.set(hostPath, inside);
    }
    env[name] = inside;
  }
  return { env, archive: files.length ? await packFiles(files) : null };
}

/**
 * The volume `name` (labelled, so close() and `redgreen gc` find it) holding the bundles: filled
 * through a container that is created on it and never started (the archive API writes into a
 * stopped container's volumes), then removed.
 */
export async function makeCaVolume(
  docker: Docker,
  o: { name: string; image: string; archive: Buffer; labels: Record<string, string> },
): Promise<void> {
  await docker.createVolume({ Name: o.name, Labels: o.labels });
  const filler = await docker.createContainer({
    name: `${o.name}-fill`,
    Image: o.image,
    Entrypoint: ['true'],
    Labels: o.labels,
    NetworkDisabled: true,
    HostConfig: { NetworkMode: 'none', Mounts: [mount(o.name, CA_MOUNT)] },
  });
  try {
    await filler.putArchive(o.archive, { path: CA_MOUNT });
  } finally {
    await filler.remove({ force: true }).catch(() => undefined);
  }
}
