import { existsSync } from 'node:fs';
import { rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';
import { discoverFixtures } from '../../harness/fixtures/load.js';
import { diffTrees } from '../../harness/fixtures/scaffold.js';
import { lintFixture } from '../../harness/pipeline/lint.js';
import { processesWith, uniqueSleep } from '../helpers/procs.js';
import { oracleProvider } from '../../harness/agents/static.js';
import { ADD_PY, ADD_TEST, makeProject, PYTEST, runProject, selfcheckProject, type Project } from '../helpers/project.js';

let project: Project | undefined;
afterEach(async () => {
  await project?.cleanup();
  project = undefined;
});

const FIX = { 'calc.py': 'def add(a, b):\n    return a + b\n' };

describe('selfcheck: each bad input has its defined outcome', () => {
  test('a broken manifest names the file and the field, and the other fixtures still run', async () => {
    project = await makeProject({
      good: {
        manifest: PYTEST,
        files: { 'calc.py': ADD_PY, 'test_calc.py': ADD_TEST },
        oracle: await diffTrees({ 'calc.py': ADD_PY }, FIX),
      },
      typo: { manifest: { ...PYTEST, test: { command: 'pytest', timeoutSec: 'soon' } }, files: {} },
      nojson: { manifest: {}, rawManifest: '{\n  "id": "nojson",\n  title: "x"\n}\n', files: {} },
    });
    const { byId } = await selfcheckProject(project);
    expect(byId.good!.verdict).toBe('valid');
    expect(byId.typo!.verdict).toBe('invalid_fixture');
    expect(byId.typo!.reason).toContain(path.join('typo', 'fixture.json'));
    expect(byId.typo!.reason).toContain('field "test.timeoutSec"');
    expect(byId.nojson!.verdict).toBe('invalid_fixture');
    // Where an editor can jump to: line and column, not a character offset.
    expect(byId.nojson!.reason).toMatch(/not valid JSON \(Expected double-quoted property name at line 3, column 3\)/);
  });

  test('a fixture whose tree cannot be uploaded (a symlink out of it) is invalid_fixture; the others still run', async () => {
    project = await makeProject({
      good: {
        manifest: PYTEST,
        files: { 'calc.py': ADD_PY, 'test_calc.py': ADD_TEST },
        oracle: await diffTrees({ 'calc.py': ADD_PY }, FIX),
      },
      escape: {
        manifest: PYTEST,
        files: { 'calc.py': ADD_PY, 'test_calc.py': ADD_TEST },
        oracle: await diffTrees({ 'calc.py': ADD_PY }, FIX),
      },
    });
    await symlink('/etc', path.join(project.fixturesDir, 'escape', 'host_etc'));
    const { byId, events } = await selfcheckProject(project);
    expect(byId.good!.verdict).toBe('valid');
    expect(byId.escape!.verdict).toBe('invalid_fixture');
    expect(byId.escape!.reason).toContain('host_etc: it is a symlink to /etc, outside the fixture');
    expect(events.filter((e) => e.id === 'escape').map((e) => e.event.type)).toEqual(['error', 'verdict']);
    // validate blames the fixture, not its oracle.
    const { fixtures } = await discoverFixtures(project, ['escape']);
    const findings = await lintFixture(fixtures[0]!);
    expect(findings.filter((f) => f.level === 'error').map((f) => f.message)).toEqual([
      expect.stringMatching(/^fixture: refusing to upload host_etc/),
    ]);
  });

  test('a missing or empty ISSUE.md is invalid_fixture, in selfcheck and run alike', async () => {
    const fixture = async () => ({
      manifest: { ...PYTEST, tests: { failToPass: ['test_calc.py::test_add'], passToPass: [] } },
      files: { 'calc.py': ADD_PY, 'test_calc.py': ADD_TEST },
      oracle: await diffTrees({ 'calc.py': ADD_PY }, FIX),
    });
    project = await makeProject({ noissue: await fixture(), blank: await fixture() });
    await rm(path.join(project.fixturesDir, 'noissue', 'ISSUE.md'));
    await writeFile(path.join(project.fixturesDir, 'blank', 'ISSUE.md'), '  \n');
    for (const mode of ['selfcheck', 'run'] as const) {
      const { byId } = await runProject(project, { mode, provider: oracleProvider });
      expect(byId.noissue!.verdict, mode).toBe('invalid_fixture');
      expect(byId.noissue!.reason).toMatch(/^ISSUE\.md is missing: write the bug report at .*noissue\/ISSUE\.md$/);
      expect(byId.blank!.verdict, mode).toBe('invalid_fixture');
      expect(byId.blank!.reason).toBe('ISSUE.md is empty: write the bug report an agent works from');
    }
  });

  test('a runner that is not installed is infra_error (not retried); a test command that cannot run shows its stderr', async () => {
    const files = { 'calc.py': ADD_PY, 'test_calc.py': ADD_TEST };
    const oracle = await diffTrees({ 'calc.py': ADD_PY }, FIX);
    project = await makeProject({
      // -S: no site-packages, as on a machine whose python3 has no pytest.
      nopytest: { manifest: { ...PYTEST, test: { command: 'python3 -S -m pytest -q', timeoutSec: 30 } }, files, oracle },
      typo: { manifest: { ...PYTEST, test: { command: 'pytst -q', timeoutSec: 30 } }, files, oracle },
    });
    const { byId } = await selfcheckProject(project);
    expect(byId.nopytest!.verdict).toBe('infra_error');
    expect(byId.nopytest!.reason).toMatch(/^red: pytest is not installed where the tests run \(exit 1\): .*No module named pytest/);
    expect(byId.nopytest!.error?.code).toBe('TOOL_MISSING');
    expect(byId.nopytest!.reason).toContain('`redgreen doctor` lists what is missing');
    expect(byId.nopytest!.attempts).toBe(1);
    expect(byId.typo!.verdict).toBe('not_red');
    expect(byId.typo!.reason).toMatch(/stderr: .*pytst: not found/);
  });

  test("a setup command that fails the same way twice is the fixture's problem, with its stderr and a hint when offline", async () => {
    const files = { 'calc.py': ADD_PY, 'test_calc.py': ADD_TEST };
    const oracle = await diffTrees({ 'calc.py': ADD_PY }, FIX);
    const setup = (command: string) => ({ ...PYTEST, setup: { commands: [command], timeoutSec: 30 } });
    project = await makeProject({
      broken: { manifest: setup('echo "ERROR: no such file requirements.txt" >&2; exit 3'), files, oracle },
      offline: { manifest: setup('echo "npm error getaddrinfo EAI_AGAIN registry.npmjs.org" >&2; exit 1'), files, oracle },
      notool: { manifest: setup('rg_no_such_installer --deps'), files, oracle },
    });
    const { byId } = await selfcheckProject(project);
    expect(byId.broken).toMatchObject({ verdict: 'invalid_fixture', attempts: 2 });
    expect(byId.broken!.reason).toMatch(
      /^setup: setup command failed \(exit 3\): .* — ERROR: no such file requirements\.txt \(the same again on a second try/,
    );
    expect(byId.broken!.durationMs).toBeGreaterThanOrEqual(byId.broken!.timings.setup ?? 0);
    expect(byId.offline!.verdict).toBe('invalid_fixture');
    expect(byId.offline!.reason).toContain('setup has no network: set "network": true under setup in fixture.json');
    // A program setup needs that is not there: said so, with where to look.
    expect(byId.notool!.reason).toContain('rg_no_such_installer is not installed where setup runs: `redgreen doctor` lists what');
  });

  test("a setup that has the network and cannot reach it is the machine's problem: infra_error, retried, never the fixture's", async () => {
    const files = { 'calc.py': ADD_PY, 'test_calc.py': ADD_TEST };
    const oracle = await diffTrees({ 'calc.py': ADD_PY }, FIX);
    // A real resolver failure: .invalid never resolves (RFC 6761), on a machine with a network or without.
    const resolve = `python3 -c "import socket; socket.getaddrinfo('redgreen-test.invalid', 443)"`;
    project = await makeProject({
      online: { manifest: { ...PYTEST, setup: { commands: [resolve], timeoutSec: 30, network: true } }, files, oracle },
    });
    const { byId } = await selfcheckProject(project);
    expect(byId.online).toMatchObject({ verdict: 'infra_error', error: { code: 'SETUP_NETWORK' }, attempts: 3 });
    expect(byId.online!.reason).toMatch(/^setup: setup could not reach the network: python3 -c .* — .*socket\.gaierror/s);
    expect(byId.online!.reason).toContain("this machine's network, not the fixture");
  });

  test('missing oracle, text that is not a diff, and an oracle that does not apply are patch errors', async () => {
    const files = { 'calc.py': ADD_PY, 'test_calc.py': ADD_TEST };
    const stale = (await diffTrees({ 'calc.py': ADD_PY }, FIX)).replace('return a - b', 'return a * b');
    project = await makeProject({
      missing: { manifest: PYTEST, files },
      prose: { manifest: PYTEST, files, oracle: 'Just change the minus into a plus.\n' },
      stale: { manifest: PYTEST, files, oracle: stale },
      empty: { manifest: PYTEST, files, oracle: '' },
    });
    const { byId } = await selfcheckProject(project);
    expect(byId.missing).toMatchObject({ verdict: 'patch_error', patch: { status: 'missing' } });
    expect(byId.missing!.reason).toContain('no oracle patch at');
    expect(byId.prose).toMatchObject({ verdict: 'patch_error', patch: { status: 'not_a_diff' } });
    expect(byId.stale).toMatchObject({ verdict: 'patch_error', patch: { status: 'failed' } });
    expect(byId.stale!.reason).toMatch(/patch failed|does not apply/);
    expect(byId.empty).toMatchObject({ verdict: 'patch_error', patch: { status: 'empty' } });
    // RED still ran: the author learns the fixture is at least failing.
    expect(byId.stale!.red?.state).toBe('fail');
  });

  test('a fixture whose tests already pass is not_red; one that runs no test is not_red too', async () => {
    project = await makeProject({
      passing: {
        manifest: PYTEST,
        files: FIX as Record<string, string>,
        oracle: await diffTrees(FIX, { 'calc.py': 'def add(a, b):\n    return b + a\n' }),
      },
      notests: { manifest: PYTEST, files: { 'calc.py': ADD_PY }, oracle: await diffTrees({ 'calc.py': ADD_PY }, FIX) },
    });
    const { byId } = await selfcheckProject(project);
    expect(byId.passing!.verdict).toBe('not_red');
    expect(byId.notests!.verdict).toBe('not_red');
    expect(byId.notests!.reason).toContain('ran no test');
  });

  test('a hanging test times out after test.timeoutSec and leaves no process behind', async () => {
    const t = uniqueSleep();
    const hang = `import subprocess, time\n\ndef test_hang():\n    subprocess.Popen(["setsid", "sleep", "${t}"])\n    time.sleep(${t})\n`;
    project = await makeProject({
      hang: {
        manifest: { ...PYTEST, test: { command: 'python3 -m pytest -q', timeoutSec: 1.5 } },
        files: { 'calc.py': ADD_PY, 'test_hang.py': hang },
        oracle: await diffTrees({ 'calc.py': ADD_PY }, FIX),
      },
    });
    const { byId } = await selfcheckProject(project);
    expect(byId.hang!.verdict).toBe('timeout');
    expect(processesWith(t)).toEqual([]);
  });

  test('a test printing hundreds of megabytes: memory stays flat and the transcript keeps a capped copy', async () => {
    const loud =
      'import sys\n\ndef test_loud():\n    chunk = "x" * 1048576\n    for _ in range(300):\n        sys.stdout.write(chunk)\n    assert False\n';
    project = await makeProject({
      loud: {
        manifest: { ...PYTEST, test: { command: 'python3 -m pytest -q -s', timeoutSec: 60 } },
        files: { 'calc.py': ADD_PY, 'test_loud.py': loud },
        oracle: await diffTrees({ 'calc.py': ADD_PY }, FIX),
      },
    });
    const before = process.memoryUsage().rss;
    const { byId, events } = await selfcheckProject(project);
    expect(process.memoryUsage().rss - before).toBeLessThan(150 * 1024 * 1024);
    expect(byId.loud!.red?.state).toBe('fail');
    const cmd = events.find((e) => e.event.type === 'command' && e.event.phase === 'red')!.event;
    if (cmd.type !== 'command') throw new Error('unreachable');
    expect(cmd.stdout.bytes).toBeGreaterThan(300 * 1048576);
    expect(cmd.stdout.truncated).toBe(true);
    expect(cmd.stdout.text.length).toBeLessThan(80 * 1024);
  });

  test('non-UTF-8 output, non-ASCII names, CRLF files and binary files in the oracle', async () => {
    const files = {
      'modülé.py': 'def greet():\r\n    return "helo"\r\n',
      'data/logo.bin': Buffer.from([0, 1, 2, 255, 254, 0, 10]),
      'test_ü.py':
        'import sys\nfrom modülé import greet\n\ndef test_greet():\n    sys.stdout.buffer.write(b"\\xff\\xfe bytes\\n")\n    assert greet() == "hello"\n\ndef test_logo():\n    assert open("data/logo.bin", "rb").read()[:3] == b"PNG"\n',
    };
    const oracle = await diffTrees(files, {
      'modülé.py': 'def greet():\r\n    return "hello"\r\n',
      'data/logo.bin': Buffer.from([80, 78, 71, 0, 255, 1]),
    });
    expect(oracle).toContain('GIT binary patch');
    project = await makeProject({
      unicode: { manifest: { ...PYTEST, test: { command: 'python3 -m pytest -q -s', timeoutSec: 30 } }, files, oracle },
    });
    const { byId } = await selfcheckProject(project);
    expect(byId.unicode!.reason).toBe('2 fail→pass, 0 pass→pass');
    expect(byId.unicode!.verdict).toBe('valid');
  });

  test('an unsafe oracle is refused before anything is written, inside or outside the sandbox', async () => {
    const target = path.join(os.tmpdir(), `rg-escape-${process.pid}.py`);
    const evil = `--- a/../../../../../..${target}\n+++ b/../../../../../..${target}\n@@ -0,0 +1 @@\n+owned\n`;
    project = await makeProject({ evil: { manifest: PYTEST, files: { 'calc.py': ADD_PY, 'test_calc.py': ADD_TEST }, oracle: evil } });
    const { byId } = await selfcheckProject(project);
    expect(byId.evil).toMatchObject({ verdict: 'patch_error', patch: { status: 'unsafe' } });
    expect(byId.evil!.reason).toContain('".." component');
    expect(existsSync(target)).toBe(false);
  });

  test('declared failToPass that already pass before the patch make the fixture not_red', async () => {
    project = await makeProject({
      wrong: {
        manifest: { ...PYTEST, tests: { failToPass: ['test_calc.py::test_zero'], passToPass: [] } },
        files: { 'calc.py': ADD_PY, 'test_calc.py': ADD_TEST },
        oracle: await diffTrees({ 'calc.py': ADD_PY }, FIX),
      },
    });
    const { byId } = await selfcheckProject(project);
    expect(byId.wrong!.verdict).toBe('not_red');
    expect(byId.wrong!.reason).toContain('test_calc.py::test_zero');
  });

  test('--repeat marks tests whose status changes between runs as flaky', async () => {
    // Passes on even runs, fails on odd ones: a counter file in the workspace flips it.
    const flaky =
      'import os\n\ndef test_coin():\n    n = int(open("n").read()) if os.path.exists("n") else 0\n    open("n", "w").write(str(n + 1))\n    assert n % 2 == 0\n';
    project = await makeProject({
      coin: {
        manifest: PYTEST,
        files: { 'calc.py': ADD_PY, 'test_calc.py': ADD_TEST, 'test_coin.py': flaky },
        oracle: await diffTrees({ 'calc.py': ADD_PY }, FIX),
      },
    });
    const { byId } = await selfcheckProject(project, { repeat: 2 });
    expect(byId.coin!.verdict).toBe('flaky');
    expect(byId.coin!.reason).toContain('test_coin.py::test_coin');
  });
});
