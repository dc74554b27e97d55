import type { CaBundles } from './ca.js';
import type { PreparedContainer } from './container.js';
import { RESET_SCRIPT } from './server-script.js';

/**
 * Makes a container fit for the next sandbox of the run: RESET_SCRIPT through its server (which
 * frames it only once no process of the sandbox user is left), and what a new container starts
 * with put back (the CA bundles), in one command. Its limit counters (in the server's frame) are
 * kept as they are now, so a limit the next sandbox runs into is told apart from one before it. False when anything could not be
 * emptied or checked: the container must go.
 */
export async function resetContainer(p: PreparedContainer, ca: CaBundles): Promise<boolean> {
  if (!p.server || !p.resettable) return false;
  const script = ca.fromRoot ? `${RESET_SCRIPT}\n${EXTRACT}` : RESET_SCRIPT;
  const o = await p.server.run({ argv: ['/bin/sh', '-c', script], env: {}, cwd: '/', internal: true }, ca.fromRoot ?? undefined);
  if (o.state !== 'ok' || o.result.exitCode !== 0 || !o.limits) return false;
  p.counters = o.limits.counters;
  return true;
}

/** Extracts the tar archive on stdin at / as the sandbox user, modes as in the archive. */
export const EXTRACT = 'exec tar -x -p -f - -C /';

/** Extracts an archive (names from /) in a container through its server, as the sandbox user. */
export async function putThroughServer(p: PreparedContainer, archive: Buffer): Promise<void> {
  const o = await p.server!.run({ argv: ['/bin/sh', '-c', EXTRACT], env: {}, cwd: '/', internal: true }, archive);
  if (o.state !== 'ok' || o.result.exitCode !== 0)
    throw new Error(`extracting files failed: ${o.result.stderr.trim() || `exit ${o.result.exitCode}`}`);
}
