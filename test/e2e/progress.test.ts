import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { scaffoldFixture } from '../../harness/fixtures/scaffold.js';
import { ReportSchema } from '../../harness/reporters/report.js';
import { BIN, runCli } from '../helpers/cli.js';
import { useTempDirs } from '../helpers/temp-dirs.js';

const tempDir = useTempDirs('rg-progress-');
const ANSI = /\x1b\[[0-9;?]*[A-Za-z]/g;

/** A fixture whose tests take a couple of seconds (long enough to be seen running), and one whose oracle is broken. */
async function project(): Promise<string> {
  const root = await tempDir();
  const dirs = { fixturesDir: path.join(root, 'fixtures'), oraclesDir: path.join(root, 'oracles') };
  await scaffoldFixture({ id: 'slow', runner: 'exit-code', ...dirs });
  await scaffoldFixture({ id: 'stale', runner: 'exit-code', ...dirs });
  const manifest = path.join(dirs.fixturesDir, 'slow/fixture.json');
  const m = JSON.parse(await readFile(manifest, 'utf8')) as { test: { command: string } };
  m.test.command = `sleep 2 && ${m.test.command}`;
  await writeFile(manifest, JSON.stringify(m));
  await writeFile(path.join(root, 'oracles/stale.patch'), 'not a patch\n');
  return root;
}

/** Runs the CLI in a pseudo-terminal (util-linux `script`), as a person at a terminal sees it. */
function inTerminal(root: string, args: string[], env: Record<string, string> = {}): { code: number | null; screen: string } {
  const typescript = path.join(root, 'typescript.txt');
  const command = `stty cols 120 rows 30; exec ${[process.execPath, BIN, ...args].map((a) => `'${a}'`).join(' ')}`;
  const { CI: _, GITHUB_ACTIONS: __, ...rest } = process.env;
  const r = spawnSync('script', ['-qfec', command, typescript], {
    cwd: root,
    env: { ...rest, ...env },
    encoding: 'utf8',
    timeout: 120_000,
  });
  return { code: r.status, screen: readFileSync(typescript, 'utf8') };
}

const hasScript = spawnSync('script', ['--version'], { stdio: 'ignore' }).status === 0;

describe('progress', () => {
  test.runIf(hasScript || process.env.CI)(
    'on a terminal: live lines with elapsed time, each running fixture and its phase, done/total, colour',
    async () => {
      const root = await project();
      const { code, screen } = inTerminal(root, ['selfcheck', 'slow', '--no-cache']);
      expect(code).toBe(0);
      const plain = screen.replace(ANSI, '');
      // Drawn before the sandbox exists, and again while it runs, with the fixture's phase.
      expect(plain).toMatch(/0\/1 done · \d+\.\ds elapsed/);
      expect(plain).toMatch(/▸ slow +red \d+\.\ds +\(\d+\.\ds\)/);
      expect(screen).toMatch(/\x1b\[\d+A/); // redrawn in place
      expect(screen).toContain('\x1b[32m✔\x1b[39m slow');
      expect(plain).toMatch(/valid: 1\/1 of all fixtures/);
      const noColor = inTerminal(root, ['selfcheck', 'slow'], { NO_COLOR: '1' }).screen;
      expect(noColor).not.toMatch(/\x1b\[(3\d|1|2|22|39)m/);
      expect(noColor.replace(ANSI, '')).toMatch(/✔ slow +valid/);
    },
  );

  test('off a terminal: a start line, a heartbeat while nothing finishes, one line per finished fixture', async () => {
    const root = await project();
    const r = await runCli(['selfcheck', '-j', '1', '--no-cache'], { cwd: root, env: { REDGREEN_HEARTBEAT_SEC: '1' } });
    const lines = r.stderr.trim().split('\n');
    expect(lines[0]).toMatch(/^redgreen selfcheck: 2 fixture\(s\) on local, concurrency 1 \(run \S+\)$/);
    expect(lines.find((l) => l.startsWith('…'))).toMatch(
      /^… 0\/2 done · \d+\.\ds elapsed; running: slow \((setup|red|upload|create|starting) \d+\.\ds\)$/,
    );
    expect(lines.filter((l) => /^[✔✘] /.test(l))).toEqual([
      expect.stringMatching(/^✔ slow  valid  .*\[1\/2\]$/),
      expect.stringMatching(/^✘ stale  patch_error  .*\[2\/2\]$/),
    ]);
    expect(r.stderr).not.toMatch(ANSI);
  });

  test('under GitHub Actions: an error annotation per missed fixture and the summary appended to the job summary', async () => {
    const root = await project();
    const summary = path.join(root, 'step-summary.md');
    await writeFile(summary, '# earlier step\n');
    const env = { GITHUB_ACTIONS: 'true', GITHUB_STEP_SUMMARY: summary };
    const r = await runCli(['selfcheck', 'stale'], { cwd: root, env });
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/^::error file=fixtures\/stale\/fixture\.json,title=redgreen selfcheck%3A stale is patch_error::\S/m);
    const md = await readFile(summary, 'utf8');
    expect(md.startsWith('# earlier step\n')).toBe(true);
    expect(md).toContain('redgreen selfcheck');
    expect(md).toContain('`stale`');
    // With --json on stdout, the annotations go to stderr (GitHub reads both) and stdout stays JSON.
    const j = await runCli(['selfcheck', 'stale', '--json'], { cwd: root, env });
    expect(ReportSchema.parse(JSON.parse(j.stdout)).fixtures[0]!.verdict).toBe('patch_error');
    expect(j.stderr).toContain('::error file=fixtures/stale/fixture.json');
    // A --reporter choice replaces the defaults: no annotations unless asked for.
    const chosen = await runCli(['selfcheck', 'stale', '--reporter', 'json'], { cwd: root, env });
    expect(chosen.stdout + chosen.stderr).not.toContain('::error');
    expect(chosen.stderr).toBe('');
  });
});
