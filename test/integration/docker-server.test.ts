import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { packFiles } from '../../harness/sandbox/core/tar.js';
import { DockerBackend } from '../../harness/sandbox/docker/backend.js';
import { dockerClient } from '../../harness/sandbox/docker/client.js';
import { DEFAULT_IMAGE } from '../../harness/sandbox/docker/image.js';
import type { ExecResult, Sandbox } from '../../harness/sandbox/core/types.js';
import { dockerTestOptions, dockerUnavailableReason } from '../helpers/backends-docker.js';

const unavailable = dockerUnavailableReason();
if (unavailable && process.env.CI) throw new Error(`CI must run the Docker backend's tests: ${unavailable}`);

/**
 * The runtime image has python3, so its containers' command server is the Python one
 * (server-python.ts); `server: 'sh'` keeps the sh one. Whichever it is, a command must not be able
 * to tell: the same user, groups, capabilities, signal handling, environment and folder, and the
 * same failures as env's when a program cannot be started.
 */
/** Every process's command line, one a line. */
const PROCESS_LINES = 'for p in /proc/[0-9]*/cmdline; do tr "\\0" " " <"$p"; echo; done';

describe.skipIf(unavailable)('docker command servers: Python and sh alike', () => {
  const backends = { python: new DockerBackend(dockerTestOptions()), sh: new DockerBackend(dockerTestOptions({ server: 'sh' })) };
  const sandboxes: Partial<Record<keyof typeof backends, Sandbox>> = {};

  beforeAll(async () => {
    for (const k of ['python', 'sh'] as const) sandboxes[k] = await backends[k].create({ runId: 'test', fixtureId: `server-${k}` });
  });
  afterAll(async () => {
    await Promise.all(Object.values(sandboxes).map((s) => s.destroy()));
    await Promise.all(Object.values(backends).map((b) => b.close()));
  });

  const both = async (command: string | string[], env?: Record<string, string>) => {
    const seen = (r: ExecResult) => ({ exitCode: r.exitCode, stdout: r.stdout, stderr: r.stderr });
    return {
      python: seen(await sandboxes.python!.exec(command, { env })),
      sh: seen(await sandboxes.sh!.exec(command, { env })),
    };
  };

  test('the servers are the ones named: Python where the image has python3, sh when asked for', async () => {
    // The Python server is a process of its own (under the init, whose command line is the sh script).
    const servers = await both(['sh', '-c', `${PROCESS_LINES} | grep -c "^python3 -I -S" || true`]);
    expect(servers.python.stdout).toBe('1\n');
    expect(servers.sh.stdout).toBe('0\n');
  });

  test('a command sees the same user, groups, capabilities, signal handling, environment, folder and OOM preference', async () => {
    const status = "grep -E '^(Uid|Gid|Groups|Cap(Inh|Prm|Eff|Bnd|Amb)|NoNewPrivs|SigBlk|SigIgn):' /proc/self/status";
    const r = await both(
      ['sh', '-c', `${status}; pwd; env | grep -v '^REDGREEN_SANDBOX=' | sort; umask; echo oom $(cat /proc/self/oom_score_adj)`],
      {
        ONLY: 'this one',
        PATH: '/usr/bin:/bin',
      },
    );
    expect(r.python).toEqual(r.sh);
    expect(r.python.exitCode).toBe(0);
    expect(r.python.stdout).toMatch(/^SigIgn:\s+0+$/m);
    expect(r.python.stdout).toMatch(/^CapEff:\s+0+$/m);
    expect(r.python.stdout).toContain('ONLY=this one\n');
    // Out of memory, the kernel kills the largest process: a command before the server.
    expect(r.python.stdout).toContain('oom 1000\n');
  });

  test('a program that cannot start fails as under env: missing 127, not executable 126, no #! run by sh', async () => {
    const prepare = 'printf "echo from sh\\nexit 3\\n" > plain && chmod +x plain && printf "x" > noexec';
    expect((await both(['sh', '-c', prepare])).python.exitCode).toBe(0);
    for (const argv of [['/no/such/program'], ['no-such-program-on-path'], ['./noexec'], ['./plain', 'arg']]) {
      const r = await both(argv, { PATH: '/usr/bin:/bin' });
      expect(r.python, argv.join(' ')).toEqual(r.sh);
    }
    const r = await both(['./plain'], { PATH: '/usr/bin:/bin' });
    expect(r.python).toEqual({ exitCode: 3, stdout: 'from sh\n', stderr: '' });
    expect((await both(['no-such-program-on-path'], { PATH: '/usr/bin:/bin' })).python).toMatchObject({
      exitCode: 127,
      stderr: expect.stringMatching(/^env: .no-such-program-on-path.: No such file or directory\n$/),
    });
  });

  test('an image whose python3 cannot run the Python server gets the sh server, which works', async () => {
    // A python3 without the select module, as an incomplete Python would be: an image of its own.
    const docker = dockerClient();
    const wrapper =
      '#!/bin/sh\n' +
      'exec /usr/bin/python3 -I -S -c \'import sys; sys.modules["select"] = None; code = sys.argv.pop(1); exec(compile(code, "server", "exec"))\' "$4" "$5" "$6"\n';
    const image = 'redgreen-test/python-without-select:latest';
    const maker = await docker.createContainer({ Image: DEFAULT_IMAGE, Entrypoint: ['true'], NetworkDisabled: true });
    try {
      await maker.putArchive(await packFiles([{ name: 'usr/local/bin/python3', content: wrapper, mode: 0o755 }]), { path: '/' });
      await maker.commit({ repo: 'redgreen-test/python-without-select', tag: 'latest' });
    } finally {
      await maker.remove({ force: true });
    }
    const backend = new DockerBackend(dockerTestOptions({ image }));
    try {
      const sb = await backend.create({ runId: 'test', fixtureId: 'old-python' });
      try {
        const ps = await sb.exec(['sh', '-c', PROCESS_LINES]);
        // The server is sh again (pid 1 is the init): its command line is the script's.
        expect(ps.stdout).toMatch(/^\/bin\/sh -c /m);
        expect(ps.stdout).not.toMatch(/^python3 -I -S|^\/usr\/bin\/python3 -I -S/m);
        expect((await sb.exec('echo works; exit 4')).exitCode).toBe(4);
        expect((await sb.exec('echo works')).stdout).toBe('works\n');
      } finally {
        await sb.destroy();
      }
    } finally {
      await backend.close();
      await docker.getImage(image).remove({ force: true });
    }
  });
});
