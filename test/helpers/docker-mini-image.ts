import { execFileSync } from 'node:child_process';
import { readFileSync, realpathSync, statSync } from 'node:fs';
import type Docker from 'dockerode';
import tar from 'tar-stream';

/** Host binaries a sandbox needs (the shell and what the exec wrapper and file removal use). */
const BINARIES = ['/bin/sh', '/bin/sleep', '/bin/grep', '/bin/cat', '/bin/rm', '/bin/echo'];

/**
 * A tiny image made of this host's own binaries and their libraries (no registry needed): no
 * redgreen folders, no label, and an ENTRYPOINT that would break any command run through it —
 * what "any image a fixture names" can look like.
 */
export async function buildMiniImage(docker: Docker, ref: string): Promise<void> {
  const files = new Map<string, string>(); // path in image → host path
  for (const bin of BINARIES) {
    files.set(bin, realpathSync(bin));
    const libs = execFileSync('ldd', [realpathSync(bin)], { encoding: 'utf8' }).match(/\/\S+/g) ?? [];
    for (const lib of libs) files.set(lib, realpathSync(lib));
  }
  const pack = tar.pack();
  const dirs = new Set<string>();
  for (const p of files.keys()) {
    const parts = p.split('/').slice(1, -1);
    parts.forEach((_, i) => dirs.add(parts.slice(0, i + 1).join('/')));
  }
  for (const d of [...dirs, 'tmp', 'etc'].sort()) pack.entry({ name: d, type: 'directory', mode: 0o755 });
  for (const [inImage, host] of files) pack.entry({ name: inImage.slice(1), mode: statSync(host).mode & 0o777 }, readFileSync(host));
  pack.finalize();
  // The tag inside `repo`: Podman's import ignores a separate `tag` (it makes `latest`).
  const progress = await docker.importImage(
    pack as unknown as NodeJS.ReadableStream,
    { repo: ref, changes: ['ENTRYPOINT ["/bin/false"]', 'ENV PATH=/bin'] } as unknown as object,
  );
  await new Promise<void>((resolve, reject) =>
    docker.modem.followProgress(progress, (err: Error | null) => (err ? reject(err) : resolve())),
  );
}
