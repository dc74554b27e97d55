import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { spawnSync } from 'node:child_process';
import { scaffoldFixture } from '../../harness/fixtures/scaffold.js';
import { TEMPLATES } from '../../harness/fixtures/templates.js';
import { ReportSchema, summarize } from '../../harness/reporters/report.js';
import { RunStateSchema } from '../../harness/transcripts/schema.js';
import { BUNDLED, SEEDS } from '../helpers/bundled.js';
import { runCli, spawnCli } from '../helpers/cli.js';
import { configRegisteringLines, configRegisteringTapLines } from '../helpers/project.js';
import { listenReady, pythonNotify } from '../helpers/ready-socket.js';
import { recordedRun } from '../helpers/recorded-run.js';
import { useTempDirs } from '../helpers/temp-dirs.js';
import { hostFoldersOfRun, processesWith, uniqueSleep } from '../helpers/procs.js';

const tempDir = useTempDirs('rg-e2e-');
const recorded = recordedRun();

describe('redgreen CLI', () => {
  test('selfcheck of the five seeds reproduces the seed table: 12 failed / 13 passed → 25 passed', async () => {
    expect(recorded.stderr).not.toContain('redgreen:');
    expect(recorded.code).toBe(0);
    const written = JSON.parse(readFileSync(path.join(recorded.reportsDir, recorded.runId, 'report.json'), 'utf8')) as unknown;
    const report = ReportSchema.parse(written);
    // report.json is written unparsed: it holds nothing its schema would strip.
    expect(report).toEqual(written);
    expect(report.runId).toBe(recorded.runId);
    const seeds = report.fixtures.filter((f) => (SEEDS as readonly string[]).includes(f.fixtureId));
    expect(seeds.map((f) => [f.fixtureId, f.verdict])).toEqual(SEEDS.map((id) => [id, 'valid']));
    const summary = summarize(seeds);
    expect(summary.tests).toEqual({ red: { failed: 12, passed: 13 }, green: { failed: 0, passed: 25 } });
    expect(summary.denominators).toEqual({ all: 5, scored: 5 });
    for (const phase of ['create', 'upload', 'setup', 'red', 'patch', 'green', 'destroy'])
      expect(seeds[0]!.timings[phase]).toBeTypeOf('number');
    // The transcript has run.json plus a JSONL per fixture.
    const run = RunStateSchema.parse(JSON.parse(readFileSync(path.join(recorded.transcriptsDir, report.runId, 'run.json'), 'utf8')));
    expect(run.status).toBe('completed');
    const lines = readFileSync(path.join(recorded.transcriptsDir, report.runId, 'bug02_off_by_one.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { type: string; phase?: string });
    expect(lines[0]!.type).toBe('fixture');
    expect(lines.filter((l) => l.type === 'command').map((l) => l.phase)).toEqual(['red', 'green']);
    expect(lines.some((l) => l.type === 'patch')).toBe(true);
    expect(lines.at(-1)!.type).toBe('result');
    // The oracles are the project's own files: the report keeps no copies of them (a run keeps the patches it graded).
    expect(existsSync(path.join(recorded.reportsDir, report.runId, 'patches'))).toBe(false);
  });

  test('every bundled fixture is valid, across runners (pytest, unittest, node:test, vitest)', () => {
    expect(recorded.code).toBe(0);
    expect(recorded.stdout).toContain(`valid: ${BUNDLED.length}/${BUNDLED.length} of all fixtures`);
    expect(recorded.stdout).toContain(`report: ${path.join(recorded.reportsDir, recorded.runId, 'report.json')}`);
    // Not a TTY: one line per finished fixture on stderr.
    expect(recorded.stderr.split('\n').filter((l) => l.startsWith('✔'))).toHaveLength(BUNDLED.length);
  });

  test('validate passes on the bundled fixtures and names the field of a broken manifest', async () => {
    expect((await runCli(['validate'], { cwd: recorded.root })).code).toBe(0);
    const root = await tempDir();
    expect((await runCli(['new', 'ok_bug', '--runner', 'node-test'], { cwd: root })).code).toBe(0);
    expect((await runCli(['new', 'bad_bug'], { cwd: root })).code).toBe(0);
    const manifest = path.join(root, 'fixtures/bad_bug/fixture.json');
    const json = JSON.parse(await readFile(manifest, 'utf8')) as { runner: string };
    json.runner = 'nose';
    await writeFile(manifest, JSON.stringify(json));
    const r = await runCli(['validate'], { cwd: root });
    expect(r.code).toBe(2);
    expect(r.stdout).toContain('✘ bad_bug');
    expect(r.stdout).toContain('field "runner"');
    expect(r.stdout).toContain('✔ ok_bug');
  });

  test('validate refuses a command the adapter cannot append its report options to', async () => {
    const root = await tempDir();
    expect((await runCli(['new', 'wrapped', '--runner', 'jest'], { cwd: root })).code).toBe(0);
    const manifest = path.join(root, 'fixtures/wrapped/fixture.json');
    const json = JSON.parse(await readFile(manifest, 'utf8')) as { test: { command: string } };
    json.test.command = 'make check';
    await writeFile(manifest, JSON.stringify(json));
    const r = await runCli(['validate'], { cwd: root });
    expect(r.code).not.toBe(0);
    expect(r.stdout).toContain('jest: test.command must end with the jest invocation (e.g. "npx jest")');
  });

  test('new scaffolds a fixture that passes selfcheck, and --write records its test lists', async () => {
    const root = await tempDir();
    const created = await runCli(['new', 'my_bug', '--runner', 'unittest'], { cwd: root });
    expect(created.code).toBe(0);
    expect(existsSync(path.join(root, 'fixture.schema.json'))).toBe(true);
    const r = await runCli(['selfcheck', 'my_bug', '--write'], { cwd: root });
    expect(r.code).toBe(0);
    const json = JSON.parse(await readFile(path.join(root, 'fixtures/my_bug/fixture.json'), 'utf8')) as { tests: unknown };
    expect(json.tests).toEqual({ failToPass: ['test_calc.TestAdd.test_add'], passToPass: ['test_calc.TestAdd.test_add_zero'] });
    expect((await runCli(['new', 'my_bug'], { cwd: root })).code).toBe(2);
  });

  test('new --runner: an unknown runner lists the built-in ones; one the config registered says how to make its fixture', async () => {
    const root = await tempDir();
    const unknown = await runCli(['new', 'x', '--runner', 'nope'], { cwd: root });
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('--runner: unknown runner "nope": one of pytest, unittest, node-test');
    await configRegisteringLines(root);
    const custom = await runCli(['new', 'x', '--runner', 'lines'], { cwd: root });
    expect(custom.code).toBe(2);
    expect(custom.stderr).toMatch(
      /"lines" is a runner registered with registerRunner\(\) without an example to scaffold: give its adapter an `example`.*--runner exit-code/,
    );
    expect(existsSync(path.join(root, 'fixtures'))).toBe(false);
  });

  test('new --runner: a runner the config registered with an example scaffolds a fixture that passes selfcheck; a bad example is refused', async () => {
    const root = await tempDir();
    await configRegisteringTapLines(root);
    expect((await runCli(['new', 'tl', '--runner', 'tap-lines'], { cwd: root })).code).toBe(0);
    const r = await runCli(['selfcheck', 'tl', '--write'], { cwd: root });
    expect(r.code).toBe(0);
    const json = JSON.parse(await readFile(path.join(root, 'fixtures/tl/fixture.json'), 'utf8')) as { runner: string; tests: unknown };
    expect(json.runner).toBe('tap-lines');
    expect(json.tests).toEqual({ failToPass: ['adds'], passToPass: ['zero'] });

    const bad = await tempDir();
    await configRegisteringTapLines(bad, { '../escape.sh': 'echo out\n', 'add.sh': 'echo $(( $1 - $2 ))\n' });
    const refused = await runCli(['new', 'x', '--runner', 'tap-lines'], { cwd: bad });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('the example of runner "tap-lines" cannot be scaffolded');
    expect(refused.stderr).toContain('files["../escape.sh"]: must be a path inside the fixture');
    expect(existsSync(path.join(bad, 'fixtures'))).toBe(false);
    expect(existsSync(path.join(path.dirname(bad), 'escape.sh'))).toBe(false);
  });

  // Templates whose setup installs their runner from npm get a test each (and a time budget each):
  // an install takes a while on a busy machine, even with the shared npm cache.
  const installs = (r: string) => TEMPLATES[r as keyof typeof TEMPLATES].manifest.setup?.network === true;
  const fixtureId = (r: string) => `t_${r.replace(/-/g, '_')}`;

  async function selfcheckTemplates(runners: string[]): Promise<void> {
    const root = await tempDir();
    for (const r of runners) expect((await runCli(['new', fixtureId(r), '--runner', r], { cwd: root })).code).toBe(0);
    const check = await runCli(['selfcheck', '--write', '--json'], { cwd: root });
    const report = ReportSchema.parse(JSON.parse(check.stdout));
    // The reason is shown only when a fixture is not valid, to say why.
    const verdicts = report.fixtures.map((f) => [f.fixtureId, f.verdict === 'valid' ? 'valid' : `${f.verdict}: ${f.reason}`]);
    expect(verdicts).toEqual(runners.map((r) => [fixtureId(r), 'valid']).sort());
    expect(check.code).toBe(0);
    // --write recorded one failing and one passing test for each (exit-code's one test is the command).
    for (const r of runners.filter((r) => r !== 'exit-code')) {
      const json = JSON.parse(await readFile(path.join(root, 'fixtures', fixtureId(r), 'fixture.json'), 'utf8')) as {
        tests: { failToPass: string[]; passToPass: string[] };
      };
      expect([json.tests.failToPass.length, json.tests.passToPass.length], r).toEqual([1, 1]);
    }
    expect((await runCli(['validate'], { cwd: root })).code).toBe(0);
  }

  test('every `new` template that installs nothing is a valid fixture out of the box', async () => {
    const runners = Object.keys(TEMPLATES).filter((r) => {
      if (installs(r)) return false;
      const tool = r === 'go' ? 'go' : r === 'cargo' ? 'cargo' : null;
      if (!tool || spawnSync(tool, ['version'], { stdio: 'ignore' }).status === 0) return true;
      if (process.env.CI) throw new Error(`CI must have ${tool} for the ${r} template`);
      return false;
    });
    await selfcheckTemplates(runners);
  });

  for (const r of Object.keys(TEMPLATES).filter(installs)) {
    test(`the \`new --runner ${r}\` template installs its runner and is a valid fixture out of the box`, async () => {
      await selfcheckTemplates([r]);
    });
  }

  test('usage errors exit 2 with a message that says what to do', async () => {
    const bad = await runCli(['selfcheck', '--concurrency', '0'], { cwd: recorded.root });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--concurrency: must be a whole number from 1');
    const unknown = await runCli(['selfcheck', 'no_such_fixture'], { cwd: recorded.root });
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('unknown fixture: no_such_fixture');
    expect(unknown.stderr).toContain('bug01_decimal_div');
    expect((await runCli(['frobnicate'])).code).toBe(2);
  });

  test('a command that succeeds prints nothing on stderr (no warning of the runtime, such as a V8 flag it does not know)', async () => {
    const r = await runCli(['list']);
    expect(r.code).toBe(0);
    expect(r.stderr).toBe('');
  });

  test('a reader that stops early (`| head`) ends the output quietly: the command still finishes, with its own exit code', async () => {
    const root = await tempDir();
    await runCli(['new', 'piped'], { cwd: root });
    for (const [args, code] of [
      [['list'], 0],
      [['selfcheck', '--reports', 'reports'], 0],
    ] as const) {
      const cli = spawnCli([...args], { cwd: root });
      // The reading end is gone before the CLI prints anything: each of its writes fails with EPIPE.
      cli.child.stdout.destroy();
      const r = await cli.result;
      expect(r.stderr).not.toMatch(/EPIPE|Unhandled/);
      expect(r.code).toBe(code);
    }
    // The run was not cut short: its report is written.
    expect(readdirSync(path.join(root, 'reports'))).toHaveLength(1);
  });

  test('a fixture that fails its expectation exits 1', async () => {
    const root = await tempDir();
    await runCli(['new', 'stale'], { cwd: root });
    await writeFile(path.join(root, 'oracles/stale.patch'), 'not a patch\n');
    const r = await runCli(['selfcheck'], { cwd: root });
    expect(r.code).toBe(1);
    expect(r.stdout).toContain('patch_error');
  });

  test('Ctrl-C stops, kills every sandbox process, writes what finished and exits 130', async () => {
    const root = await tempDir();
    const dirs = { fixturesDir: path.join(root, 'fixtures'), oraclesDir: path.join(root, 'oracles') };
    await scaffoldFixture({ id: 'quick', runner: 'pytest', ...dirs });
    await scaffoldFixture({ id: 'hang', runner: 'pytest', ...dirs });
    const t = uniqueSleep();
    const sock = path.join(root, 'running.sock');
    // The hanging test starts its sleep, then says so on the socket.
    await writeFile(
      path.join(root, 'fixtures/hang/test_calc.py'),
      `import subprocess\n\ndef test_hang():\n    p = subprocess.Popen(["sleep", "${t}"])\n${pythonNotify(sock)}    p.wait()\n`,
    );
    const ready = listenReady(sock);
    const cli = spawnCli(['selfcheck', '--concurrency', '2'], { cwd: root });
    try {
      // Interrupt once the quick fixture is done and the hanging one is surely running.
      await cli.waitFor('the quick fixture finished', (o) => o.stderr.includes('quick'));
      await Promise.race([ready.connected, cli.waitFor('the hanging test started', () => false)]);
    } finally {
      ready.close();
    }
    expect(processesWith(t)).not.toEqual([]);
    cli.child.kill('SIGINT');
    const r = await cli.result;
    expect(r.code).toBe(130);
    expect(processesWith(t)).toEqual([]);
    const runs = readdirSync(path.join(root, 'transcripts'));
    expect(runs).toHaveLength(1);
    const run = RunStateSchema.parse(JSON.parse(readFileSync(path.join(root, 'transcripts', runs[0]!, 'run.json'), 'utf8')));
    expect(run.status).toBe('interrupted');
    expect(run.fixtures.quick!.status).toBe('done');
    expect(run.fixtures.hang!.status).toBe('unfinished');
    const report = ReportSchema.parse(JSON.parse(readFileSync(path.join(root, 'reports', runs[0]!, 'report.json'), 'utf8')));
    expect(report.interrupted).toBe(true);
    expect(report.unfinished).toEqual(['hang']);
    // It says how to finish the run.
    expect(r.stderr).toContain(
      `interrupted: 1 fixture(s) unfinished; to finish the run:\n  redgreen selfcheck --concurrency 2 --resume ${runs[0]}\n`,
    );
    // No sandbox folder of the run is left (reused folders included): none names it as its owner.
    expect(hostFoldersOfRun(runs[0]!)).toEqual([]);
  });
});
