import { chmod, mkdir, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { packFiles } from '../../harness/sandbox/core/tar.js';
import { DockerBackend } from '../../harness/sandbox/docker/backend.js';
import { dockerClient } from '../../harness/sandbox/docker/client.js';
import { dockerLimits } from '../../harness/sandbox/docker/config.js';
import { DEFAULT_IMAGE, ensureImage } from '../../harness/sandbox/docker/image.js';
import { DEFAULT_LIMITS } from '../../harness/sandbox/core/limits.js';
import type { ExecResult, Sandbox } from '../../harness/sandbox/core/types.js';
import { dockerTestOptions, dockerUnavailableReason } from '../helpers/backends-docker.js';
import { useTempDirs } from '../helpers/temp-dirs.js';
import { withSandboxContainer } from '../helpers/docker-container.js';

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

  test("after file work, which the Python server does with the sandbox user's ids, the server is root again, with no groups", async () => {
    const sb = sandboxes.python!;
    await sb.writeFiles([{ path: 'ids/a.txt', content: 'a' }]);
    expect((await sb.readFile('ids/a.txt')).toString()).toBe('a');
    await sb.removeFiles(['ids']);
    const ids = await sb.exec([
      'sh',
      '-c',
      `for p in /proc/[0-9]*; do if tr "\\0" " " <"$p/cmdline" | grep -q "^python3 -I -S"; then grep -E "^(Uid|Gid|Groups):" "$p/status"; fi; done`,
    ]);
    expect(ids.stdout.replace(/[ \t]+/g, ' ')).toBe('Uid: 0 0 0 0\nGid: 0 0 0 0\nGroups: \n');
  });

  test('processes a command leaves at the pids limit, where the server cannot fork, are killed in place: same server, root again', async () => {
    const sb = sandboxes.python!;
    // The server's pid, start time and ids: a replaced container (what "dirty" leads to) has another server.
    const server = async () =>
      (
        await sb.exec([
          'sh',
          '-c',
          `for p in /proc/[0-9]*; do if tr "\\0" " " <"$p/cmdline" | grep -q "^python3 -I -S"; then cut -d" " -f1,22 "$p/stat"; grep -E "^Uid:" "$p/status"; fi; done`,
        ])
      ).stdout.replace(/[ \t]+/g, ' ');
    const before = await server();
    expect(before).toMatch(/^\d+ \d+\nUid: 0 0 0 0\n$/);
    // A holder forks sleeping children until the limit refuses one, says so, and goes on retrying:
    // every pid that frees (the command's own, at its end) is taken back at once, as a fork bomb does.
    const fill = [
      'import os',
      'r, w = os.pipe()',
      'if os.fork() == 0:',
      '    os.setsid()',
      '    said = False',
      '    while True:',
      '        try:',
      '            pid = os.fork()',
      '        except OSError:',
      '            if not said:',
      "                os.write(w, b'f')",
      '                said = True',
      '            continue',
      '        if pid == 0:',
      "            os.execv('/bin/sleep', ['sleep', '3600'])",
      'os.read(r, 1)',
      "print('full')",
      '',
    ].join('\n');
    await sb.writeFiles([{ path: 'fill.py', content: fill }]);
    const r = await sb.exec(['python3', 'fill.py'], { timeoutMs: 120_000 });
    expect(r).toMatchObject({ exitCode: 0, stdout: 'full\n', timedOut: false });
    expect((await sb.exec(['sh', '-c', `${PROCESS_LINES} | grep -c '^sleep 3600' || true`])).stdout).toBe('0\n');
    expect(await server()).toBe(before);
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

  test('a command with input (a put): it reads it whole, or stops early and the next request is still read as one', async () => {
    // The harness's own puts are file work, which the Python server does itself; any other command
    // gets its input through a pipe, as under the sh server.
    const docker = dockerClient();
    const image = (await ensureImage(docker, DEFAULT_IMAGE)).ref;
    const withInput = async (shellServer: boolean) => {
      const name = `redgreen-test-put-${shellServer ? 'sh' : 'python'}-${process.pid}`;
      const plan = { image, volume: name, labels: { 'redgreen.test': 'put' }, limits: dockerLimits(DEFAULT_LIMITS), shellServer };
      return withSandboxContainer(docker, plan, async ({ server }) => {
        const run = async (argv: string[], input?: Buffer) =>
          (await server!.run({ argv, env: {}, cwd: '/', internal: true }, input)).result;
        const big = Buffer.alloc(3 * 1024 * 1024, 'x');
        return [await run(['wc', '-c'], big), await run(['head', '-c', '3'], big), await run(['echo', 'next'])].map((r) => ({
          exitCode: r.exitCode,
          stdout: r.stdout,
        }));
      });
    };
    const python = await withInput(false);
    expect(python).toEqual(await withInput(true));
    expect(python).toEqual([
      { exitCode: 0, stdout: `${3 * 1024 * 1024}\n` },
      { exitCode: 0, stdout: 'xxx' },
      { exitCode: 0, stdout: 'next\n' },
    ]);
  });

  test('an image whose python3 cannot run the Python server gets the sh server, which works', async () => {
    // A python3 without the select module, as an incomplete Python would be: an image of its own.
    const wrapper =
      '#!/bin/sh\n' +
      'exec /usr/bin/python3 -I -S -c \'import sys; sys.modules["select"] = None; code = sys.argv.pop(1); exec(compile(code, "server", "exec"))\' "$4" "$5" "$6"\n';
    const image = await imageWith('redgreen-test/python-without-select', { 'usr/local/bin/python3': wrapper });
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
      await dockerClient().getImage(image).remove({ force: true });
    }
  });
});

/** The runtime image with these files added (a committed container), named `repo:latest`. */
async function imageWith(repo: string, files: Record<string, string>): Promise<string> {
  const docker = dockerClient();
  const maker = await docker.createContainer({ Image: DEFAULT_IMAGE, Entrypoint: ['true'], NetworkDisabled: true });
  try {
    await maker.putArchive(await packFiles(Object.entries(files).map(([name, content]) => ({ name, content, mode: 0o755 }))), {
      path: '/',
    });
    await maker.commit({ repo, tag: 'latest' });
  } finally {
    await maker.remove({ force: true });
  }
  return `${repo}:latest`;
}

/**
 * Every entry below the folders named: path, kind, mode, and a file's sha256 or a link's target
 * (in Python: the file work's own programs may be missing, see below).
 */
const LIST = `import hashlib, os, stat, sys
out = []
for root in sys.argv[1:]:
    for d, dirs, files in os.walk(root):
        for n in dirs + files:
            p = os.path.join(d, n)
            m = os.lstat(p).st_mode
            kind = 'l' if stat.S_ISLNK(m) else 'd' if stat.S_ISDIR(m) else 'f'
            extra = os.readlink(p) if kind == 'l' else hashlib.sha256(open(p, 'rb').read()).hexdigest() if kind == 'f' else ''
            out.append('%s %s %o %s' % (p, kind, stat.S_IMODE(m), extra))
print(chr(10).join(sorted(out)))`;

/**
 * What the tar formats and modes make hard: names past ustar's 100 and 255 bytes, a read-only
 * folder with a file in it, an empty folder, a symlink, modes, a non-ASCII name.
 */
async function makeTree(dir: string): Promise<void> {
  const deep = ['a', 'b', 'c', 'd'].map((c) => c.repeat(70)).join('/');
  for (const d of ['src', 'bin', 'empty', 'ro', 'gone', deep]) await mkdir(path.join(dir, d), { recursive: true });
  const files: [string, string, number][] = [
    ['src/app.py', 'old\n', 0o644],
    ['bin/run.sh', '#!/bin/sh\necho run\n', 0o755],
    ['secret.txt', 'only mine', 0o600],
    ['ro/inside.txt', 'kept', 0o644],
    ['gone/x.txt', 'removed later', 0o644],
    [`${'n'.repeat(120)}.txt`, 'a long name', 0o644],
    [`${deep}/file.txt`, 'a long path', 0o640],
    ['ünïcode ✓.txt', 'ü', 0o644],
  ];
  for (const [name, content, mode] of files) await writeFile(path.join(dir, name), content, { mode });
  await symlink('src/app.py', path.join(dir, 'link-to-app'));
  await chmod(path.join(dir, 'ro'), 0o555);
}

/**
 * Under the Python server, the harness's file work (upload, write, read, remove, the reset between
 * sandboxes) is done by the server's own code instead of tar, cat, rm and find
 * (server-python-files.ts). It must leave exactly what those programs leave, and fail where they fail.
 */
describe.skipIf(unavailable)('docker command servers: the same file work, the Python one starting no program for it', () => {
  const tempDir = useTempDirs('rg-server-files-');

  /** One sandbox's file work and dirt, then the next sandbox of the run: what each step left. */
  async function fileWork(backend: DockerBackend): Promise<Record<string, unknown>> {
    const runId = 'server-files';
    await backend.open(runId);
    try {
      const tree = await tempDir();
      await makeTree(tree);
      const first = await backend.create({ runId, fixtureId: 'files' });
      const uploaded = await first.uploadDir(tree);
      await chmod(path.join(tree, 'ro'), 0o755); // the temp folder's cleanup empties it
      await first.writeFiles([
        { path: 'src/app.py', content: 'new\n', mode: 0o600 },
        { path: 'new/deeper/file.txt', content: 'made with its folders' },
      ]);
      const read = (await first.readFile('src/app.py')).toString();
      const intoReadOnly = await first.writeFiles([{ path: 'ro/more.txt', content: 'x' }]).then(
        () => 'written',
        (e: { code?: string }) => e.code,
      );
      await first.removeFiles(['gone', 'not-there']);
      const listing = (await first.exec(['python3', '-c', LIST, '/workspace'])).stdout;
      // What the reset must empty: read-only folders, a tree 200 deep, a closed workspace, HOME, /tmp, /dev/shm, a message queue.
      const dirt = await first.exec([
        'sh',
        '-c',
        'set -e; mkdir -p /tmp/a/b "$HOME/h"; touch /tmp/a/b/f "$HOME/h/f" /dev/shm/s; chmod 500 /tmp/a/b "$HOME/h"; ' +
          'd=deep; i=0; while [ $i -lt 200 ]; do d=$d/d; i=$((i+1)); done; mkdir -p $d; touch $d/f; chmod 555 $d; chmod 000 ro; chmod 700 /workspace; ipcmk -Q >/dev/null',
      ]);
      await first.destroy();
      const second = await backend.create({ runId, fixtureId: 'after' });
      const after = await second.exec([
        'sh',
        '-c',
        'stat -c "%n %a" /workspace /redgreen "$HOME"; ls -A /workspace /redgreen /tmp /dev/shm "$HOME"',
      ]);
      await second.destroy();
      return { uploaded, read, intoReadOnly, listing, dirt: dirt.exitCode, reused: second.id === first.id, after: after.stdout };
    } finally {
      await backend.close();
    }
  }

  test('Python and sh servers leave the same files, refuse the same writes and reset alike', async () => {
    const python = await fileWork(new DockerBackend(dockerTestOptions()));
    const sh = await fileWork(new DockerBackend(dockerTestOptions({ server: 'sh' })));
    expect(python).toEqual(sh);
    expect(python).toMatchObject({ uploaded: { files: 9 }, read: 'new\n', intoReadOnly: 'SANDBOX_FAILED', dirt: 0, reused: true });
    const listing = python.listing as string;
    expect(listing).toContain('/workspace/src/app.py f 600 ');
    expect(listing).toContain('/workspace/ro d 555 \n');
    expect(listing).toContain('/workspace/link-to-app l 777 src/app.py\n');
    expect(listing).toContain(`/workspace/${'n'.repeat(120)}.txt f 644 `);
    expect(listing).toMatch(/\/dddd+\/file\.txt f 640 /);
    expect(listing).not.toContain('/workspace/gone');
    // The volumes back to a new folder's mode, every place empty (ls lists folders in its own order).
    expect(python.after).toBe(
      '/workspace 755\n/redgreen 755\n/home/sandbox 755\n/dev/shm:\n\n/home/sandbox:\n\n/redgreen:\n\n/tmp:\n\n/workspace:\n',
    );
  });

  test('a full volume: an upload and a write fail as tar fails, and leave what tar leaves', async () => {
    const big = path.join(await tempDir(), 'big.bin');
    await writeFile(big, Buffer.alloc(12 * 1024 * 1024, 7));
    const full = async (server: 'auto' | 'sh') => {
      const limits = { memoryBytes: 1024 ** 3, cpus: 1, pids: 512, diskBytes: 8 * 1024 * 1024 };
      const backend = new DockerBackend(dockerTestOptions({ server, limits }));
      const sb = await backend.create({ runId: 'test', fixtureId: `full-${server}` });
      try {
        const failure = (e: { code?: string; message: string }) => `${e.code}: ${e.message}`;
        return {
          upload: await sb.uploadFile!(big, 'big.bin').then(() => 'written', failure),
          write: await sb.writeFiles([{ path: 'small.txt', content: 'x' }]).then(() => 'written', failure),
          left: (await sb.exec(['python3', '-c', LIST, '/workspace'])).stdout.replace(/ [0-9a-f]{64}$/gm, ''),
        };
      } finally {
        await sb.destroy();
        await backend.close();
      }
    };
    const python = await full('auto');
    // Alike but for the words of the cut-short upload: GNU tar says "Wrote only 2560 of 10240 bytes".
    expect(python).toEqual(await full('sh').then((sh) => ({ ...sh, upload: python.upload })));
    expect(python.upload).toMatch(
      /^SANDBOX_FAILED: could not write big\.bin: tar: workspace\/big\.bin: Cannot write: No space left on device/,
    );
    expect(python.write).toMatch(/^SANDBOX_FAILED: could not write small\.txt: tar: .*No space left on device/);
    expect(python.left).toBe('/workspace/big.bin f 644\n/workspace/small.txt f 644\n');
  });

  test('under the Python server, the file work runs with tar, cat, rm and find all broken', async () => {
    const broken = '#!/bin/sh\necho "$0 should not have run" >&2\nexit 97\n';
    const image = await imageWith(
      'redgreen-test/no-file-programs',
      Object.fromEntries(['tar', 'cat', 'rm', 'find'].map((p) => [`usr/local/bin/${p}`, broken])),
    );
    try {
      const python = await fileWork(new DockerBackend(dockerTestOptions()));
      const without = await fileWork(new DockerBackend(dockerTestOptions({ image })));
      expect(without).toEqual(python);
    } finally {
      await dockerClient().getImage(image).remove({ force: true });
    }
  });
});
