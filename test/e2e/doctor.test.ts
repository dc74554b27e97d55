import { mkdir, readFile, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { scaffoldFixture } from '../../harness/fixtures/scaffold.js';
import { runCli } from '../helpers/cli.js';
import { configRegisteringLines } from '../helpers/project.js';
import { useTempDirs } from '../helpers/temp-dirs.js';
import { spawnSync } from 'node:child_process';
import net from 'node:net';
import { startE2BDouble } from '../helpers/e2b-server/server.js';

const tempDir = useTempDirs('rg-doctor-');
const which = (cmd: string) => spawnSync('sh', ['-c', `command -v ${cmd}`], { encoding: 'utf8' }).stdout.trim();

describe('redgreen doctor', () => {
  test('names each tool the fixtures here need, marks what is missing with how to get it, and exits 1 for a needed one', async () => {
    const root = await tempDir();
    const dirs = { fixturesDir: path.join(root, 'fixtures'), oraclesDir: path.join(root, 'oracles') };
    await scaffoldFixture({ id: 'py_bug', runner: 'pytest', ...dirs });
    await scaffoldFixture({ id: 'go_bug', runner: 'go', ...dirs });
    await scaffoldFixture({ id: 'js_bug', runner: 'jest', ...dirs });
    // A PATH with git only: python3, go and npm are missing, as on a machine without them.
    const bin = path.join(root, 'bin');
    await mkdir(bin);
    await symlink(which('git'), path.join(bin, 'git'));
    const r = await runCli(['doctor', '--json'], { cwd: root, env: { PATH: bin } });
    expect(r.code).toBe(1);
    const out = JSON.parse(r.stdout) as {
      tools: { name: string; ok: boolean; fix?: string; neededBy?: string[] }[];
      backends: { name: string; ok: boolean }[];
      missing: string[];
    };
    const tool = (n: string) => out.tools.find((t) => t.name === n)!;
    expect(tool('git')).toMatchObject({ ok: true, neededBy: ['go_bug', 'js_bug', 'py_bug'] });
    expect(tool('python3 + pytest')).toMatchObject({ ok: false, neededBy: ['py_bug'], fix: expect.stringContaining('python3-pytest') });
    expect(tool('go')).toMatchObject({ ok: false, neededBy: ['go_bug'], fix: expect.stringContaining('golang-go') });
    // jest installs itself from npm in setup and runs through npx.
    expect(tool('npm')).toMatchObject({ ok: false, neededBy: ['js_bug'] });
    expect(tool('npx')).toMatchObject({ ok: false, neededBy: ['js_bug'], fix: expect.stringContaining('npx <runner>') });
    // Missing but needed by no fixture here: listed, not counted.
    expect(tool('cargo')).toMatchObject({ ok: false });
    expect(tool('cargo').neededBy).toBeUndefined();
    expect(out.missing.sort()).toEqual(['go', 'npm', 'npx', 'python3 + pytest']);
    expect(out.backends.map((b) => b.name)).toEqual(['local', 'bwrap', 'docker', 'podman', 'e2b']);
    expect(out.backends[0]).toMatchObject({ name: 'local', ok: true });
  });

  test('a runner the config registers is checked for the tools its adapter names, for the fixtures that use it', async () => {
    const root = await tempDir();
    const dirs = { fixturesDir: path.join(root, 'fixtures'), oraclesDir: path.join(root, 'oracles') };
    await scaffoldFixture({ id: 'custom_bug', runner: 'exit-code', ...dirs });
    const manifest = path.join(dirs.fixturesDir, 'custom_bug', 'fixture.json');
    await writeFile(manifest, JSON.stringify({ ...JSON.parse(await readFile(manifest, 'utf8')), runner: 'lines' }));
    await configRegisteringLines(root, ['sh', 'rg-no-such-tool']);
    const r = await runCli(['doctor', '--json'], { cwd: root });
    const out = JSON.parse(r.stdout) as { tools: { name: string; ok: boolean; fix?: string; neededBy?: string[] }[]; missing: string[] };
    const tool = (n: string) => out.tools.find((t) => t.name === n);
    expect(tool('sh')).toMatchObject({ ok: true, neededBy: ['custom_bug'] });
    expect(tool('rg-no-such-tool')).toMatchObject({
      ok: false,
      neededBy: ['custom_bug'],
      fix: 'install rg-no-such-tool: the lines runner registered in your config runs it',
    });
    expect(out.missing).toEqual(['rg-no-such-tool']);
    expect(r.code).toBe(1);
  });

  test('on this machine with its tools, the bundled fixtures have what they need', async () => {
    const r = await runCli(['doctor']);
    expect(r.stdout).toContain('everything the fixtures here need is present');
    expect(r.stdout).toMatch(/✔ python3 \+ pytest +pytest \d/);
    expect(r.code).toBe(0);
  });

  test('e2b: the key and the API address are checked (reachable and accepted, refused, unreachable), each with what to do', async () => {
    const double = await startE2BDouble({ apiKey: 'the-key' });
    const free = await new Promise<number>((resolve) => {
      const srv = net.createServer().listen(0, '127.0.0.1', () => {
        const { port } = srv.address() as net.AddressInfo;
        srv.close(() => resolve(port));
      });
    });
    try {
      const e2b = async (env: Record<string, string>) => {
        const out = JSON.parse((await runCli(['doctor', '--json'], { env })).stdout) as {
          backends: { name: string; ok: boolean; detail: string; fix?: string }[];
        };
        return out.backends.find((b) => b.name === 'e2b')!;
      };
      expect(await e2b({ E2B_API_KEY: 'the-key', E2B_API_URL: double.apiUrl })).toMatchObject({
        ok: true,
        detail: `${double.apiUrl}: reachable, key accepted`,
      });
      expect(await e2b({ E2B_API_KEY: 'another', E2B_API_URL: double.apiUrl })).toMatchObject({
        ok: false,
        detail: expect.stringContaining(`${double.apiUrl} refused E2B_API_KEY`),
        fix: expect.stringContaining('check E2B_API_KEY'),
      });
      const nowhere = `http://127.0.0.1:${free}`;
      expect(await e2b({ E2B_API_KEY: 'the-key', E2B_API_URL: nowhere })).toMatchObject({
        ok: false,
        detail: expect.stringContaining(`the E2B API at ${nowhere} cannot be reached`),
        fix: expect.stringContaining('E2B_API_URL'),
      });
    } finally {
      await double.close();
    }
  });
});
