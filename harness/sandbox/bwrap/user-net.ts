import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { execa } from 'execa';
import { RedgreenError, tailOf } from '../../errors.js';

/** slirp4netns's built-in DNS forwarder (its default 10.0.2.0/24 network): the resolver a network command is given. */
export const USER_NET_DNS = '10.0.2.3';

const INSTALL = 'install slirp4netns (apt-get install -y slirp4netns); `redgreen doctor` lists what each backend needs';

/**
 * A user-mode network for one bwrap command. bubblewrap's `--share-net` would hand the command the
 * host's own network namespace, loopback and all (a database, the harness's services); instead the
 * command gets a fresh namespace, held open by a small process, that slirp4netns connects to the
 * outside with `--disable-host-loopback` (its gateway refuses rather than reaching the host's
 * 127.0.0.1) and no port forwarded in. bwrap cannot join a namespace, so the command enters it
 * through nsenter and then shares it. Both helpers are the harness's children, killed and reaped by
 * close(); each also ends on its own when the harness dies (the holder reads EOF, slirp4netns's
 * exit fd closes).
 */
export class UserNet {
  private closed?: Promise<void>;

  private constructor(
    private readonly holder: Helper,
    private readonly slirp: Helper,
    /** Whether the namespace has a user namespace of its own (not root: nsenter must join it too). */
    private readonly userns: boolean,
    /** The resolv.conf to bind over the host's: DNS through the forwarder (a host resolver on 127.0.0.53 included). */
    readonly resolvConf: string,
  ) {}

  /** A namespace with its network up; `dir` (the sandbox's own folder) receives its resolv.conf. */
  static async open(dir: string): Promise<UserNet> {
    const resolvConf = path.join(dir, 'resolv.conf');
    await writeFile(resolvConf, userNetResolvConf(await readFile('/etc/resolv.conf', 'utf8').catch(() => '')));
    const userns = process.getuid?.() !== 0;
    // `echo` runs after unshare(2): its line says the namespace exists. `cat` then holds it until EOF.
    const holder = helper(
      'unshare',
      [...(userns ? ['--user', '--map-current-user'] : []), '--net', '--', '/bin/sh', '-c', 'echo; exec cat'],
      0,
    );
    let slirp: Helper | undefined;
    try {
      if (!(await firstData(holder.stdout, holder))) {
        const r = await holder;
        throw new RedgreenError(
          'SANDBOX_FAILED',
          `bwrap: could not create a network namespace for a command with network: ${tailOf(holder.stderrTail()) || r.message}`,
          'the kernel must allow (user) namespaces',
        );
      }
      // fd 3: slirp4netns writes a byte once the interface is up; fd 4: it exits when the harness's end closes.
      const args = ['--configure', '--mtu=65520', '--disable-host-loopback', '--ready-fd=3', '--exit-fd=4', String(holder.pid), 'tap0'];
      // As root, --enable-sandbox drops its capabilities (unprivileged it has none to drop, and the
      // option fails there: it wants to become root in the namespace, which maps only the user). Its
      // sandbox makes only / private before it detaches the old root: every mount below a shared
      // one would be unmounted on the host too (a running container's volumes: measured with
      // slirp4netns 1.2.0). So it starts in a mount namespace of its own whose mounts are all slaves.
      const s = (slirp = userns
        ? helper('slirp4netns', args, 2)
        : helper('unshare', ['--mount', '--propagation', 'slave', '--', 'slirp4netns', '--enable-sandbox', ...args], 2));
      if (!(await firstData(s.stdio[3], s))) {
        const r = await s;
        // unshare exits 127 when the program it runs is not there.
        if (r.code === 'ENOENT' || (!userns && r.exitCode === 127))
          throw new RedgreenError('TOOL_MISSING', 'bwrap: a command with network needs slirp4netns, which is not installed', INSTALL);
        throw new RedgreenError(
          'SANDBOX_FAILED',
          `bwrap: slirp4netns could not set up the network: ${tailOf(s.stderrTail()) || r.message}`,
        );
      }
      return new UserNet(holder, s, userns, resolvConf);
    } catch (e) {
      await Promise.all([stop(holder), slirp && stop(slirp)]);
      throw e;
    }
  }

  /** The argv prefix that runs a command inside the namespace (bwrap then needs `--share-net`). */
  enter(): string[] {
    return ['nsenter', `--target=${this.holder.pid}`, '--net', ...(this.userns ? ['--user', '--preserve-credentials'] : []), '--'];
  }

  /** Kills and reaps both helpers. Idempotent; never throws. */
  close(): Promise<void> {
    this.closed ??= Promise.all([stop(this.slirp), stop(this.holder)]).then(() => undefined);
    return this.closed;
  }
}

/**
 * A helper process: stdin, stdout and stderr piped (the holder's stdin is what keeps it alive), plus
 * `extraFds` pipes from fd 3 on; a cleared environment; never buffered or rejected: close() reaps it.
 */
function helper(file: string, args: string[], extraFds: number) {
  const p = execa(file, args, {
    stdio: ['pipe', 'pipe', 'pipe', ...Array.from({ length: extraFds }, () => 'pipe' as const)],
    buffer: false,
    reject: false,
    extendEnv: false,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
  });
  let tail = '';
  p.stderr?.on('data', (c: Buffer) => (tail = (tail + c.toString()).slice(-4096)));
  p.stdout?.resume();
  return Object.assign(p, { stderrTail: () => tail });
}

type Helper = ReturnType<typeof helper>;

async function stop(p: Helper): Promise<void> {
  p.kill('SIGKILL');
  await p;
}

/** Whether `stream` yields data before `proc` ends: its ready line or byte. */
function firstData(stream: NodeJS.ReadableStream | null | undefined, proc: Helper): Promise<boolean> {
  return new Promise((resolve) => {
    if (!stream) return resolve(false);
    stream.once('data', () => resolve(true));
    stream.once('end', () => resolve(false));
    stream.once('error', () => resolve(false));
    void proc.then(() => resolve(false));
  });
}

/** A resolv.conf for a network command: the host's search and options, the forwarder as the only nameserver. */
export function userNetResolvConf(host: string): string {
  const kept = host.split('\n').filter((l) => /^\s*(search|domain|options)\b/.test(l));
  return [...kept, `nameserver ${USER_NET_DNS}`, ''].join('\n');
}
