import { constants as fsc } from 'node:fs';
import { access, readdir, readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { execa } from 'execa';
import { RedgreenError } from '../../errors.js';

export const DEFAULT_MIRROR = 'http://deb.debian.org/debian';

/** debootstrap lives in sbin, which a user's PATH often lacks. */
export async function findDebootstrap(): Promise<string> {
  const dirs = [...(process.env.PATH ?? '').split(path.delimiter), '/usr/sbin', '/sbin', '/usr/local/sbin'];
  for (const dir of dirs.filter(Boolean)) {
    const candidate = path.join(dir, 'debootstrap');
    if (
      await access(candidate, fsc.X_OK).then(
        () => true,
        () => false,
      )
    )
      return candidate;
  }
  throw new RedgreenError(
    'SANDBOX_FAILED',
    'debootstrap is not installed: the runtime image is built from Debian packages with it',
    'install it (`apt-get install -y debootstrap`), then run `npx redgreen image build` again',
  );
}

/**
 * The Debian archive this machine's apt already uses (so a local or proxied mirror is reused),
 * else deb.debian.org. Only URIs that serve the Debian archive itself qualify: an Ubuntu or
 * third-party repository, or the security archive, has no `trixie` to bootstrap from.
 */
export async function hostDebianMirror(): Promise<string> {
  const texts: string[] = [];
  texts.push(await readFile('/etc/apt/sources.list', 'utf8').catch(() => ''));
  const dir = '/etc/apt/sources.list.d';
  for (const f of (await readdir(dir).catch(() => [] as string[])).sort()) {
    if (f.endsWith('.list') || f.endsWith('.sources')) texts.push(await readFile(path.join(dir, f), 'utf8').catch(() => ''));
  }
  for (const text of texts) {
    for (const line of text.split('\n')) {
      const uris = /^\s*URIs:\s*(.+)$/i.exec(line)?.[1]?.split(/\s+/) ?? /^\s*deb\s+(?:\[[^\]]*\]\s+)?(\S+)/.exec(line)?.slice(1) ?? [];
      const uri = uris.find((u) => /^https?:\/\//.test(u) && /\/debian\/?$/.test(u));
      if (uri) return uri.replace(/\/$/, '');
    }
  }
  return DEFAULT_MIRROR;
}

/** Fails before any work when the image cannot be bootstrapped here: debootstrap missing, or not root. */
export async function assertCanBootstrap(): Promise<string> {
  const bin = await findDebootstrap();
  if (typeof process.getuid === 'function' && process.getuid() !== 0) {
    throw new RedgreenError(
      'SANDBOX_FAILED',
      'debootstrap must run as root to build the runtime image',
      'run `sudo npx redgreen image build` (the image is then usable by any user of this Docker engine)',
    );
  }
  return bin;
}

/** `debootstrap --variant=minbase`: the smallest Debian that apt can then complete. */
export async function debootstrap(o: {
  suite: string;
  target: string;
  mirror: string;
  log: (line: string) => void;
  signal?: AbortSignal;
}): Promise<void> {
  const bin = await assertCanBootstrap();
  const child = execa(bin, ['--variant=minbase', o.suite, o.target, o.mirror], {
    reject: false,
    all: true,
    buffer: false,
    stdin: 'ignore',
    ...(o.signal ? { cancelSignal: o.signal } : {}),
  });
  const tail: string[] = [];
  child.all?.setEncoding('utf8');
  let partial = '';
  child.all?.on('data', (chunk: string) => {
    const lines = (partial + chunk).split('\n');
    partial = lines.pop() ?? '';
    for (const line of lines) {
      o.log(line);
      tail.push(line);
      if (tail.length > 15) tail.shift();
    }
  });
  const r = await child;
  if (r.exitCode !== 0) {
    const logFile = path.join(o.target, 'debootstrap', 'debootstrap.log');
    throw new RedgreenError(
      'SANDBOX_FAILED',
      `debootstrap ${o.suite} from ${o.mirror} failed (exit ${r.exitCode ?? r.signal}):\n${tail.join('\n')}`,
      `its log is ${logFile} until the build folder is removed; try another mirror with --mirror`,
    );
  }
}

/**
 * Removes a bootstrap tree. debootstrap mounts /proc, /sys and device nodes inside it and unmounts
 * them on exit; if it was killed, some may remain, and a recursive delete through a bind mount
 * of /dev would delete the host's. Mounts are lazily detached first; if any stays, the tree is
 * left in place and named instead of deleted.
 */
export async function removeRootfs(dir: string, warn: (line: string) => void): Promise<void> {
  const mounted = async () =>
    (await readFile('/proc/self/mounts', 'utf8').catch(() => ''))
      .split('\n')
      .map((l) => (l.split(' ')[1] ?? '').replace(/\\040/g, ' '))
      .filter((m) => m === dir || m.startsWith(`${dir}/`))
      .sort((a, b) => b.length - a.length);
  for (const m of await mounted()) await execa('umount', ['-l', m], { reject: false });
  const left = await mounted();
  if (left.length) {
    warn(`left ${dir} in place: still mounted inside it: ${left.join(', ')}`);
    return;
  }
  await rm(dir, { recursive: true, force: true });
}
