import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, rm, symlink } from 'node:fs/promises';
import { readdirSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { BwrapBackend } from '../../harness/sandbox/bwrap/backend.js';
import type { Sandbox } from '../../harness/sandbox/core/types.js';
import { dockerClient } from '../../harness/sandbox/docker/client.js';
import { resolveSetupNetwork, SETUP_NETWORK } from '../../harness/sandbox/docker/network.js';
import { podmanClient } from '../../harness/sandbox/podman/client.js';
import { gcHostFolders } from '../../harness/sandbox/host/gc.js';
import { backendCases } from '../helpers/backends.js';
import { REPO } from '../helpers/cli.js';
import { processesWith, uniqueSleep } from '../helpers/procs.js';

/**
 * What a command with network gets beyond the conformance suite's promises (never the host's
 * loopback, the outside reachable): on bwrap, the user-mode network's helpers live exactly as long
 * as the command; on the engines, a bridge, never the host's network.
 */
const available = new Set((await backendCases()).map((c) => c.name));

/** Live or unreaped (zombie) children of `parent` (default: this harness) that are user-mode network helpers. */
function netHelpers(parent = process.pid): string[] {
  const found: string[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      // Fields after the command name: state, ppid.
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const [state, ppid] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const cmd = readFileSync(`/proc/${name}/cmdline`, 'utf8').split('\0');
      if (Number(ppid) === parent && ['slirp4netns', 'unshare', 'cat'].includes(path.basename(cmd[0] ?? '')))
        found.push(`${name} ${state} ${cmd.join(' ')}`);
      else if (Number(ppid) === parent && state === 'Z') found.push(`${name} Z (unreaped)`);
    } catch {
      // gone meanwhile
    }
  }
  return found;
}

/** Whether `pid` still runs (a zombie has ended). */
function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}

describe.skipIf(!available.has('bwrap'))('bwrap: the user-mode network of a command', () => {
  const backend = new BwrapBackend();
  let sb: Sandbox;
  beforeEach(async () => {
    sb = await backend.create({ runId: 'network-test', fixtureId: 'net' });
  });
  afterEach(async () => {
    await sb.destroy();
    expect(netHelpers()).toEqual([]);
  });

  test('its helpers are killed and reaped when the command ends, times out, or the sandbox is destroyed under it', async () => {
    expect((await sb.exec('cat /proc/net/route | wc -l', { network: true })).exitCode).toBe(0);
    expect(netHelpers()).toEqual([]);

    const t = uniqueSleep();
    const timedOut = await sb.exec(`sleep ${t}`, { network: true, timeoutMs: 500 });
    expect(timedOut.timedOut).toBe(true);
    expect(netHelpers()).toEqual([]);

    // Destroyed once the command has said it runs (its helpers are up then).
    let running!: () => void;
    const started = new Promise<void>((r) => (running = r));
    const exec = sb.exec(`echo up; sleep ${t}`, { network: true, onOutput: () => running() });
    await started;
    expect(netHelpers().length).toBeGreaterThan(0);
    await sb.destroy();
    await exec;
    expect(netHelpers()).toEqual([]);
    expect(processesWith(t)).toEqual([]);
  });

  test('its helpers end on their own when the harness is killed -9 mid-command', async () => {
    const t = uniqueSleep();
    // Its own folder for sandboxes: a run another test starts meanwhile removes dead harnesses' folders from the shared one.
    const base = await mkdtemp(path.join(os.tmpdir(), 'rg-net-killed-'));
    // A harness (the built library, as host-gc.test.ts does) that starts a command with network, says so, and is killed.
    const script = `
      const { BwrapBackend } = await import(${JSON.stringify(path.join(REPO, 'dist/sandbox/bwrap/backend.js'))});
      const sb = await new BwrapBackend({ baseDir: ${JSON.stringify(base)} }).create({ runId: 'network-test-killed', fixtureId: 'killed' });
      await sb.exec('echo up; sleep ${t}', { network: true, onOutput: () => console.log('up') });`;
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    await new Promise<void>((resolve) => {
      child.stdout.on('data', (d: Buffer) => {
        out += d.toString();
        if (out.includes('up\n')) resolve();
      });
      child.on('close', () => resolve()); // it failed: the check below says so
    });
    expect(out).toBe('up\n');
    const helpers = netHelpers(child.pid).map((h) => Number(h.split(' ')[0]));
    expect(helpers.length).toBe(2);
    child.kill('SIGKILL');
    await new Promise((r) => child.on('close', r));
    // Orphans now: nothing to wait on but their exit (the holder reads EOF, slirp4netns's exit fd closes).
    await expect.poll(() => helpers.filter(alive), { timeout: 10_000 }).toEqual([]);
    expect(processesWith(t)).toEqual([]);
    // Its folder, as `redgreen gc` would.
    expect(await gcHostFolders(base, { runIds: ['network-test-killed'] })).toHaveLength(1);
    await rm(base, { recursive: true, force: true });
  });

  // As root slirp4netns runs in a sandbox of its own (user-net.ts), whose teardown once unmounted,
  // on the host, every mount below a shared one: a running Docker container's volumes among them.
  test.skipIf(process.getuid?.() !== 0)('a command with network leaves the host’s mounts alone (as root)', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'rg-shared-mount-'));
    const below = path.join(dir, 'below');
    const mounted = () => readFileSync('/proc/self/mountinfo', 'utf8').includes(` ${below} `);
    try {
      await execa('mount', ['--bind', dir, dir]);
      await execa('mount', ['--make-shared', dir]);
      await mkdir(below);
      await execa('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', below]);
      expect(mounted()).toBe(true);
      expect((await sb.exec('true', { network: true })).exitCode).toBe(0);
      expect(mounted()).toBe(true);
    } finally {
      if (mounted()) await execa('umount', [below]);
      await execa('umount', [dir]).catch(() => undefined);
      await rm(dir, { recursive: true, force: true });
    }
  });

  test('the resolver is the network’s forwarder, never a host loopback resolver', async () => {
    const r = await sb.exec('grep nameserver /etc/resolv.conf', { network: true });
    expect(r.stdout).toBe('nameserver 10.0.2.3\n');
  });

  test('without slirp4netns a command with network is TOOL_MISSING saying what to install; one without network still runs', async () => {
    // A PATH with everything a bwrap command uses but slirp4netns.
    const bin = await mkdtemp(path.join(os.tmpdir(), 'rg-no-slirp-'));
    const saved = process.env.PATH;
    try {
      for (const tool of ['bwrap', 'prlimit', 'nsenter', 'unshare', 'sh', 'cat', 'mkdir', 'echo'])
        await symlink(`/usr/bin/${tool}`, path.join(bin, tool)).catch(() => symlink(`/bin/${tool}`, path.join(bin, tool)));
      process.env.PATH = bin;
      await expect(sb.exec('true', { network: true })).rejects.toMatchObject({
        code: 'TOOL_MISSING',
        hint: expect.stringContaining('apt-get install -y slirp4netns'),
      });
      expect(netHelpers()).toEqual([]);
      expect((await sb.exec('echo offline')).stdout).toBe('offline\n');
    } finally {
      process.env.PATH = saved;
      await rm(bin, { recursive: true, force: true });
    }
  });
});

const engines = [
  { name: 'docker', client: dockerClient },
  { name: 'podman', client: podmanClient },
].filter((e) => available.has(e.name));

describe.each(engines)('$name: the network of a command with network', ({ client }) => {
  const docker = client();

  test('is a bridge: the default one, else redgreen’s own, labelled; never the host network', async () => {
    const name = await resolveSetupNetwork(docker);
    const info = (await docker.getNetwork(name).inspect()) as { Driver: string; Labels: Record<string, string> | null };
    expect(info.Driver).toBe('bridge');
    if (name === SETUP_NETWORK) expect(info.Labels).toMatchObject({ 'redgreen.role': 'setup-network' });
    else expect(name).toBe('bridge');
    for (const shared of ['host', 'container:abc'])
      await expect(resolveSetupNetwork(docker, shared)).rejects.toMatchObject({
        code: 'USAGE',
        message: expect.stringContaining('loopback'),
      });
  });
});
