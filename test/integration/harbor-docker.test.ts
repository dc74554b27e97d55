import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { expect, test } from 'vitest';
import { DEFAULT_IMAGE } from '../../harness/sandbox/docker/image.js';
import { dockerUnavailableReason } from '../helpers/backends-docker.js';
import { copyBundled } from '../helpers/bundled.js';
import { runCli } from '../helpers/cli.js';
import { useTempDirs } from '../helpers/temp-dirs.js';

const unavailable = dockerUnavailableReason();
if (unavailable && process.env.CI) throw new Error(`CI must run the Docker backend's tests: ${unavailable}`);

const temp = useTempDirs('rg-harbor-docker-');

function docker(...args: string[]): { code: number | null; out: string } {
  const r = spawnSync('docker', args, { encoding: 'utf8' });
  return { code: r.status, out: `${r.stdout}${r.stderr}` };
}

/**
 * An exported task run as Harbor runs one (src/harbor/verifier/verifier.py, agents/oracle.py):
 * the image built from environment/, tests/ and solution/ copied in, every step through `bash -c`,
 * the reward read from /logs/verifier/reward.txt. The fixture's image is the local runtime image
 * (no registry here), so the Dockerfile's own lines are what is under test.
 */
test.skipIf(unavailable)(
  'an exported Harbor task builds, and grades 0 on the bug and 1 after solution/solve.sh, as Harbor runs it',
  async () => {
    const root = await copyBundled(await temp(), ['bug01_decimal_div']);
    const manifest = path.join(root, 'fixtures', 'bug01_decimal_div', 'fixture.json');
    await writeFile(manifest, JSON.stringify({ ...JSON.parse(await readFile(manifest, 'utf8')), image: DEFAULT_IMAGE }));
    const out = path.join(root, 'tasks');
    const exported = await runCli(['export', 'harbor', '--root', root, '--out', out]);
    expect(exported.code, exported.stderr).toBe(0);
    const task = path.join(out, 'bug01_decimal_div');

    const tag = `redgreen-harbor-test:${randomBytes(4).toString('hex')}`;
    let container = '';
    try {
      const built = docker('build', '-q', '-t', tag, path.join(task, 'environment'));
      expect(built.code, built.out).toBe(0);
      const started = docker('run', '-d', '--network', 'none', tag, 'sleep', 'infinity');
      expect(started.code, started.out).toBe(0);
      container = started.out.trim();
      const bash = (script: string) => docker('exec', container, 'bash', '-c', script);
      const verify = () =>
        bash(
          'mkdir -p /logs/verifier && chmod +x /tests/test.sh && (/tests/test.sh) > /logs/verifier/test-stdout.txt 2>&1; cat /logs/verifier/reward.txt',
        );
      const tests = docker('cp', path.join(task, 'tests'), `${container}:/tests`);
      expect(tests.code, tests.out).toBe(0);
      expect(verify().out).toBe('0\n');
      const solution = docker('cp', path.join(task, 'solution'), `${container}:/solution`);
      expect(solution.code, solution.out).toBe(0);
      const solved = bash('mkdir -p /logs/agent && chmod +x /solution/solve.sh && /solution/solve.sh > /logs/agent/oracle.txt 2>&1');
      expect(solved.code, bash('cat /logs/agent/oracle.txt').out).toBe(0);
      expect(verify().out).toBe('1\n');
    } finally {
      if (container) docker('rm', '-f', container);
      docker('rmi', '-f', tag);
    }
  },
);
