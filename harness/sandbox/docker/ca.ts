import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { OWNER } from './archive.js';
import { packFiles, type TarFile } from '../core/tar.js';
import { SCRATCH_DIR } from './config.js';

/**
 * Variables naming a CA bundle file, which the local backend passes through: behind a
 * TLS-inspecting proxy they are what makes npm and pip trust it. A host path means nothing in a
 * container, so each bundle is copied into the sandbox and the variable points at the copy.
 */
export const CA_FILE_VARS: readonly string[] = ['NODE_EXTRA_CA_CERTS', 'SSL_CERT_FILE', 'REQUESTS_CA_BUNDLE', 'PIP_CERT'];

const CA_DIR = '.ca';

export interface CaBundles {
  /** Variable → path inside the sandbox. */
  env: Record<string, string>;
  /** An archive of the copies, to extract in the scratch folder (archive API); null when the host names none. */
  archive: Buffer | null;
  /** The same, named from / (what the command server's tar extracts). */
  fromRoot: Buffer | null;
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
      const rel = `${CA_DIR}/${files.length}-${path.basename(hostPath)}`;
      files.push({ name: rel, content, mode: 0o644 });
      inside = `${SCRATCH_DIR}/${rel}`;
      byHostPath.set(hostPath, inside);
    }
    env[name] = inside;
  }
  if (!files.length) return { env, archive: null, fromRoot: null };
  const fromRoot = files.map((f) => ({ ...f, name: `${SCRATCH_DIR.slice(1)}/${f.name}` }));
  return { env, archive: await packFiles(files, { owner: OWNER, dirs: [CA_DIR] }), fromRoot: await packFiles(fromRoot) };
}
