import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { access, chmod, cp, mkdir, mkdtemp, readFile, rm, stat, unlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { applyToFixture, Staging, type ApplyOutcome } from '../../harness/patch/apply.js';
import { parsePatch } from '../../harness/patch/parse.js';
import { protectedMatcher } from '../../harness/patch/protect.js';
import { syncPatch } from '../../harness/patch/sync.js';
import { LocalBackend } from '../../harness/sandbox/host/local.js';

const META = ['fixture.json', 'ISSUE.md'];
const BINARY = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 0, 1, 2, 0xff, 0]);
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function tempDir(prefix: string): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), prefix));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

async function writeTree(root: string, files: Record<string, string | Buffer>): Promise<void> {
  for (const [rel, content] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(root, rel)), { recursive: true });
    await writeFile(path.join(root, rel), content);
  }
}

/** A fixture folder: harness metadata plus the buggy repository. */
async function fixture(): Promise<string> {
  const dir = await tempDir('rg-fixture-');
  await writeTree(dir, {
    'fixture.json': '{"id":"x"}\n',
    'ISSUE.md': '# bug\n',
    'src/calc.py': 'def div(a, b):\n    return a // b\n',
    'src/old.py': 'OLD = True\n',
    'tests/test_calc.py': 'def test_div():\n    assert div(1, 2) == 0.5\n',
    'win.txt': 'one\r\ntwo\r\n',
    'logo.bin': BINARY,
    'ä.txt': 'umlaut\n',
  });
  return dir;
}

/**
 * The patch real git produces for `edit` on a copy of the fixture (metadata left out, as
 * Staging leaves it out).
 */
async function patchFor(fixtureDir: string, edit: (dir: string) => Promise<void>, ...diffArgs: string[]): Promise<string> {
  const dir = await tempDir('rg-patch-');
  await cp(fixtureDir, dir, { recursive: true, filter: (src) => !META.includes(path.basename(src)) });
  const git = (...args: string[]) =>
    execFileSync('git', ['-c', 'core.autocrlf=false', '-c', 'user.name=t', '-c', 'user.email=t@example.com', ...args], {
      cwd: dir,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { PATH: process.env.PATH, HOME: dir, GIT_CONFIG_NOSYSTEM: '1', LANG: 'C' },
    });
  git('init', '-q');
  git('add', '-A');
  git('commit', '-qm', 'base');
  await edit(dir);
  git('add', '-A');
  return git('diff', '--cached', ...diffArgs);
}

async function staging(fixtureDir: string, patchText: string): Promise<Staging> {
  const s = await Staging.create(fixtureDir, META, parsePatch(patchText));
  cleanups.push(() => s.dispose());
  return s;
}

const apply = (fx: string, text: string, options: { fuzzy?: boolean } = {}) => applyToFixture(fx, META, text, parsePatch(text), options);
const content = (o: ApplyOutcome, p: string) => o.files?.get(p)?.content.toString();

const fixCalc = (dir: string) => writeFile(path.join(dir, 'src/calc.py'), 'def div(a, b):\n    return a / b\n');

describe('applyToFixture', () => {
  it('gives the files the patch leaves and leaves the fixture alone', async () => {
    const fx = await fixture();
    const text = await patchFor(fx, fixCalc);
    const outcome = await apply(fx, text);
    expect(outcome.status).toBe('applied');
    expect([...outcome.files!.keys()]).toEqual(['src/calc.py']);
    expect(content(outcome, 'src/calc.py')).toBe('def div(a, b):\n    return a / b\n');
    await expect(readFile(path.join(fx, 'src/calc.py'), 'utf8')).resolves.toContain('a // b');
  });

  it('reports a patch that is already applied', async () => {
    const fx = await fixture();
    const text = await patchFor(fx, fixCalc);
    await fixCalc(fx);
    await expect(apply(fx, text)).resolves.toEqual({ status: 'already_applied', reason: 'the patch is already applied' });
  });

  it("fails with git's reason when the context does not match", async () => {
    const fx = await fixture();
    const text = await patchFor(fx, fixCalc);
    await writeFile(path.join(fx, 'src/calc.py'), 'def div(a, b):\n    return int(a / b)\n');
    const outcome = await apply(fx, text);
    expect(outcome.status).toBe('failed');
    expect(outcome.reason).toMatch(/patch failed: src\/calc\.py:1/);
    expect(outcome.reason).toMatch(/src\/calc\.py: patch does not apply/);
  });

  it('applies nothing when one file of the patch does not apply', async () => {
    const fx = await fixture();
    const text = await patchFor(fx, async (dir) => {
      await fixCalc(dir);
      await writeFile(path.join(dir, 'src/old.py'), 'OLD = False\n');
    });
    await writeFile(path.join(fx, 'src/old.py'), 'OLD = None\n');
    const outcome = await apply(fx, text);
    expect(outcome.status).toBe('failed');
    expect(outcome.files).toBeUndefined();
  });

  it('applies a hunk git finds away from its stated line (git, not the exact path)', async () => {
    const fx = await fixture();
    const body = (op: string) => `import math\n\n\ndef div(a, b):\n    return a ${op} b\n`;
    await writeFile(path.join(fx, 'src/calc.py'), body('//'));
    const text = await patchFor(fx, (dir) => writeFile(path.join(dir, 'src/calc.py'), body('/')));
    await writeFile(path.join(fx, 'src/calc.py'), `# a new first line\n${body('//')}`);
    const outcome = await apply(fx, text);
    expect(outcome.status).toBe('applied');
    expect(content(outcome, 'src/calc.py')).toBe(`# a new first line\n${body('/')}`);
  });

  it('applies a binary patch', async () => {
    const fx = await fixture();
    const next = Buffer.concat([BINARY, Buffer.from([0, 7, 0xfe])]);
    const text = await patchFor(fx, (dir) => writeFile(path.join(dir, 'logo.bin'), next), '--binary');
    const outcome = await apply(fx, text);
    expect(outcome.status).toBe('applied');
    expect(outcome.files!.get('logo.bin')!.content).toEqual(next);
  });

  it('applies to a CRLF file and keeps its line endings', async () => {
    const fx = await fixture();
    const text = await patchFor(fx, (dir) => writeFile(path.join(dir, 'win.txt'), 'one\r\nTWO\r\n'));
    const outcome = await apply(fx, text);
    expect(outcome.status).toBe('applied');
    expect(content(outcome, 'win.txt')).toBe('one\r\nTWO\r\n');
  });

  it('applies to a file with a non-ASCII name (git quotes it)', async () => {
    const fx = await fixture();
    const text = await patchFor(fx, (dir) => writeFile(path.join(dir, 'ä.txt'), 'umlaut fixed\n'));
    expect(text).toContain('"a/\\303\\244.txt"');
    const outcome = await apply(fx, text);
    expect(outcome.status).toBe('applied');
    expect(content(outcome, 'ä.txt')).toBe('umlaut fixed\n');
  });

  it('applies a `git diff --no-prefix` patch at strip 0', async () => {
    const fx = await fixture();
    const text = await patchFor(fx, fixCalc, '--no-prefix');
    expect(content(await apply(fx, text), 'src/calc.py')).toContain('a / b');
  });

  it('applies a plain `diff -u` patch at strip 0', async () => {
    const fx = await fixture();
    const work = await tempDir('rg-diffu-');
    await writeTree(work, { 'src/calc.py.orig': await readFile(path.join(fx, 'src/calc.py')) });
    await cp(path.join(work, 'src/calc.py.orig'), path.join(work, 'src/calc.py'));
    await fixCalc(work);
    const text = spawnSync('diff', ['-u', 'src/calc.py.orig', 'src/calc.py'], { cwd: work, encoding: 'utf8' }).stdout;
    expect(content(await apply(fx, text), 'src/calc.py')).toContain('a / b');
  });
});

describe('Staging (the copy git applies in)', () => {
  it('holds what the patch touches, never the fixture metadata', async () => {
    const fx = await fixture();
    const text = await patchFor(fx, fixCalc);
    const s = await staging(fx, text);
    await expect(readFile(path.join(s.dir, 'src/calc.py'), 'utf8')).resolves.toContain('a // b');
    await expect(access(path.join(s.dir, 'src/old.py'))).rejects.toThrow();
    await expect(access(path.join(s.dir, 'fixture.json'))).rejects.toThrow();
    await expect(access(path.join(s.dir, 'ISSUE.md'))).rejects.toThrow();
  });

  it('refuses a patch that needs a folder where the fixture has a file, as git does in the whole tree', async () => {
    const fx = await fixture();
    const text = await patchFor(fx, async (dir) => {
      await rm(path.join(dir, 'win.txt'));
      await writeTree(dir, { 'win.txt/inner.txt': 'x\n' });
    });
    // Only the new file: the patch as an agent might send it, without the deletion.
    const onlyNew = text.slice(text.indexOf('diff --git a/win.txt/inner.txt'));
    expect((await apply(fx, onlyNew)).status).toBe('failed');
    expect((await (await staging(fx, onlyNew)).apply(onlyNew, parsePatch(onlyNew))).status).toBe('failed');
  });

  it('removes its temp dir on dispose', async () => {
    const fx = await fixture();
    const s = await Staging.create(fx, META, parsePatch(await patchFor(fx, fixCalc)));
    await s.dispose();
    await expect(access(path.dirname(s.dir))).rejects.toMatchObject({ code: 'ENOENT' });
  });
});

describe('syncPatch', () => {
  it('writes changed files, removes deleted ones and refuses protected ones', async () => {
    const fx = await fixture();
    const text = await patchFor(fx, async (dir) => {
      await fixCalc(dir);
      await unlink(path.join(dir, 'src/old.py'));
      await writeFile(path.join(dir, 'tests/test_calc.py'), 'def test_div():\n    assert True\n');
      await writeFile(path.join(dir, 'run.sh'), 'echo hi\n');
      await chmod(path.join(dir, 'run.sh'), 0o755);
    });
    const outcome = await apply(fx, text);
    expect(outcome.status).toBe('applied');
    const sandbox = await new LocalBackend().create({ runId: 't', fixtureId: 'x' });
    try {
      await sandbox.uploadDir(fx, { skip: META });
      const result = await syncPatch(sandbox, outcome.files!, protectedMatcher(['test_*.py']));
      expect(result.tampered).toEqual(['tests/test_calc.py']);
      expect(result.removed).toEqual(['src/old.py']);
      const fixed = 'def div(a, b):\n    return a / b\n';
      expect(result.written.map((w) => w.path)).toEqual(['run.sh', 'src/calc.py']);
      expect(result.written[1]).toEqual({
        path: 'src/calc.py',
        bytes: fixed.length,
        sha256: createHash('sha256').update(fixed).digest('hex'),
      });
      expect((await sandbox.readFile('src/calc.py')).toString()).toBe(fixed);
      await expect(sandbox.readFile('src/old.py')).rejects.toThrow();
      expect((await sandbox.readFile('tests/test_calc.py')).toString()).toContain('== 0.5');
      expect((await stat(path.join(sandbox.workdir, 'run.sh'))).mode & 0o777).toBe(0o755);
    } finally {
      await sandbox.destroy();
    }
  });
});
