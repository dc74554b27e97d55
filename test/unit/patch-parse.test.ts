import { execFileSync, spawnSync } from 'node:child_process';
import { chmod, mkdir, mkdtemp, rename, rm, symlink, unlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { parsePatch, touchedPaths, unquotePath, type ParsedPatch } from '../../harness/patch/parse.js';

/** The headers of each section, without where it sits in the text (checked on its own below). */
const headers = (p: ParsedPatch) => p.files.map(({ lines: _lines, ...f }) => f);

const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(dirs.splice(0).map((d) => rm(d, { recursive: true, force: true })));
});

/** git with no user or system config, so the output is what a stock git produces. */
function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', ['-c', 'core.autocrlf=false', ...args], {
    cwd,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { PATH: process.env.PATH, HOME: cwd, GIT_CONFIG_NOSYSTEM: '1', LANG: 'C' },
  });
}

async function writeTree(root: string, files: Record<string, string | Buffer>): Promise<void> {
  for (const [rel, content] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(root, rel)), { recursive: true });
    await writeFile(path.join(root, rel), content);
  }
}

/** A committed repository holding `files`; edit its working tree, then call `diff`. */
async function repo(files: Record<string, string | Buffer>): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'rg-parse-'));
  dirs.push(dir);
  await writeTree(dir, files);
  git(dir, 'init', '-q');
  git(dir, 'add', '-A');
  git(dir, '-c', 'user.name=t', '-c', 'user.email=t@example.com', 'commit', '-qm', 'base');
  return dir;
}

function diff(dir: string, ...args: string[]): string {
  git(dir, 'add', '-A');
  return git(dir, 'diff', '--cached', ...args);
}

describe('parsePatch on real git diffs', () => {
  it('reads a modification', async () => {
    const dir = await repo({ 'src/calc.py': 'a = 1\nb = 2\n' });
    await writeFile(path.join(dir, 'src/calc.py'), 'a = 1\nb = 3\n');
    const p = parsePatch(diff(dir));
    expect(p).toEqual({
      files: [{ oldPath: 'src/calc.py', newPath: 'src/calc.py', kind: 'modify', binary: false, hunks: 1, lines: [0, 9] }],
      gitStyle: true,
      strip: 1,
      crlf: false,
    });
  });

  it('reads a new file and a deletion', async () => {
    const dir = await repo({ 'old.txt': 'bye\n' });
    await unlink(path.join(dir, 'old.txt'));
    await writeTree(dir, { 'pkg/new.txt': 'hi\n' });
    const p = parsePatch(diff(dir));
    expect(headers(p)).toEqual([
      { oldPath: 'old.txt', newPath: null, kind: 'delete', oldMode: '100644', binary: false, hunks: 1 },
      { oldPath: null, newPath: 'pkg/new.txt', kind: 'add', newMode: '100644', binary: false, hunks: 1 },
    ]);
  });

  it("records each section's lines in the text, from its first header to the next section", () => {
    const text =
      'intro\ndiff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\ndiff --git a/y b/y\n--- a/y\n+++ b/y\n@@ -1 +1 @@\n-c\n+d\n';
    expect(parsePatch(text).files.map((f) => f.lines)).toEqual([
      [1, 7],
      [7, 14],
    ]);
  });

  it('reads a pure rename and a rename with edits (-M)', async () => {
    const body = Array.from({ length: 20 }, (_, i) => `line ${i}\n`).join('');
    const dir = await repo({ 'a.txt': body, 'b.txt': `b\n${body}` });
    await mkdir(path.join(dir, 'moved'));
    await rename(path.join(dir, 'a.txt'), path.join(dir, 'moved/a.txt'));
    await rename(path.join(dir, 'b.txt'), path.join(dir, 'c.txt'));
    await writeFile(path.join(dir, 'c.txt'), `b\n${body}extra\n`);
    const text = diff(dir, '-M');
    expect(text).toContain('similarity index 100%');
    // git orders sections by the new name.
    expect(headers(parsePatch(text))).toEqual([
      { oldPath: 'b.txt', newPath: 'c.txt', kind: 'rename', binary: false, hunks: 1 },
      { oldPath: 'a.txt', newPath: 'moved/a.txt', kind: 'rename', binary: false, hunks: 0 },
    ]);
  });

  it('reads a mode change (chmod +x) with no hunk', async () => {
    const dir = await repo({ 'run.sh': 'echo hi\n' });
    await chmod(path.join(dir, 'run.sh'), 0o755);
    expect(headers(parsePatch(diff(dir)))).toEqual([
      { oldPath: 'run.sh', newPath: 'run.sh', kind: 'modify', oldMode: '100644', newMode: '100755', binary: false, hunks: 0 },
    ]);
  });

  it('reads a binary file with --binary and without', async () => {
    const dir = await repo({ 'img.bin': Buffer.from([0, 1, 2, 3, 0, 255]) });
    await writeFile(path.join(dir, 'img.bin'), Buffer.from([0, 9, 9, 9, 0, 254, 0]));
    const withData = diff(dir, '--binary');
    expect(withData).toContain('GIT binary patch');
    const expected = [{ oldPath: 'img.bin', newPath: 'img.bin', kind: 'modify', binary: true, hunks: 0 }];
    expect(headers(parsePatch(withData))).toEqual(expected);
    expect(diff(dir)).toMatch(/^Binary files a\/img.bin and b\/img.bin differ$/m);
    expect(headers(parsePatch(diff(dir)))).toEqual(expected);
  });

  it('unquotes a non-ASCII file name, quoted or not', async () => {
    const dir = await repo({ 'ä.txt': 'x\n' });
    await writeFile(path.join(dir, 'ä.txt'), 'y\n');
    const quoted = diff(dir);
    expect(quoted).toContain('diff --git "a/\\303\\244.txt" "b/\\303\\244.txt"');
    const raw = git(dir, '-c', 'core.quotepath=false', 'diff', '--cached');
    expect(raw).toContain('diff --git a/ä.txt b/ä.txt');
    for (const text of [quoted, raw]) expect(touchedPaths(parsePatch(text))).toEqual(['ä.txt']);
  });

  it('flags CRLF content and still reads the headers', async () => {
    const dir = await repo({ 'win.txt': 'one\r\ntwo\r\n' });
    await writeFile(path.join(dir, 'win.txt'), 'one\r\nTWO\r\n');
    const p = parsePatch(diff(dir));
    expect(p.crlf).toBe(true);
    expect(headers(p)).toEqual([{ oldPath: 'win.txt', newPath: 'win.txt', kind: 'modify', binary: false, hunks: 1 }]);
  });

  it('records the target of a new symlink', async () => {
    const dir = await repo({ 'x.txt': 'x\n' });
    await symlink('../outside', path.join(dir, 'link'));
    expect(headers(parsePatch(diff(dir)))).toEqual([
      { oldPath: null, newPath: 'link', kind: 'add', newMode: '120000', symlinkTarget: '../outside', binary: false, hunks: 1 },
    ]);
  });

  it('reads `git diff --no-prefix` paths at strip 0, renames included', async () => {
    const body = Array.from({ length: 20 }, (_, i) => `line ${i}\n`).join('');
    const dir = await repo({ 'src/calc.py': 'a\n', 'docs/a.txt': body });
    await writeFile(path.join(dir, 'src/calc.py'), 'b\n');
    await rename(path.join(dir, 'docs/a.txt'), path.join(dir, 'docs/b.txt'));
    const text = diff(dir, '-M', '--no-prefix');
    expect(text).toContain('diff --git src/calc.py src/calc.py');
    const p = parsePatch(text);
    expect(p).toMatchObject({ gitStyle: true, strip: 0 });
    expect(p.files.map((f) => [f.kind, f.oldPath, f.newPath])).toEqual([
      ['rename', 'docs/a.txt', 'docs/b.txt'],
      ['modify', 'src/calc.py', 'src/calc.py'],
    ]);
  });
});

describe('parsePatch on plain diff -u', () => {
  /** `diff -u` run from `cwd`; it exits 1 when the files differ. */
  function diffU(cwd: string, ...args: string[]): string {
    const r = spawnSync('diff', ['-u', ...args], { cwd, encoding: 'utf8' });
    expect(r.status).toBe(1);
    return r.stdout;
  }

  it('keeps names without a/ b/ prefixes (strip 0)', async () => {
    const dir = await repo({ 'calc.py.orig': 'a\n', 'calc.py': 'b\n' });
    const p = parsePatch(diffU(dir, 'calc.py.orig', 'calc.py'));
    expect(p).toMatchObject({ gitStyle: false, strip: 0, crlf: false });
    expect(headers(p)).toEqual([{ oldPath: 'calc.py.orig', newPath: 'calc.py', kind: 'modify', binary: false, hunks: 1 }]);
  });

  it('keeps a folder that both sides share (strip 0)', async () => {
    const dir = await repo({ 'src/calc.py.orig': 'a\n', 'src/calc.py': 'b\n' });
    const p = parsePatch(diffU(dir, 'src/calc.py.orig', 'src/calc.py'));
    expect(p.strip).toBe(0);
    expect(touchedPaths(p)).toEqual(['src/calc.py.orig', 'src/calc.py']);
  });

  it('strips the two tree names of `diff -ruN old new` (strip 1)', async () => {
    const dir = await repo({ 'old/src/x.py': 'a\n', 'new/src/x.py': 'b\n', 'new/src/y.py': 'c\n' });
    const p = parsePatch(diffU(dir, '-rN', 'old', 'new'));
    expect(p.strip).toBe(1);
    expect(p.files.map((f) => [f.kind, f.oldPath, f.newPath])).toEqual([
      ['modify', 'src/x.py', 'src/x.py'],
      // diff -N writes the missing side as an empty file with the epoch date, not /dev/null.
      ['modify', 'src/y.py', 'src/y.py'],
    ]);
  });
});

describe('parsePatch refusals and absolute paths', () => {
  it('refuses empty text with PATCH_EMPTY', () => {
    for (const text of ['', '  \n\n']) expect(() => parsePatch(text)).toThrow(expect.objectContaining({ code: 'PATCH_EMPTY' }));
  });

  it('refuses prose with PATCH_NOT_A_DIFF', () => {
    const text = 'I fixed the bug by changing calc.py:\n\n    return a / b\n--- end ---\n';
    expect(() => parsePatch(text)).toThrow(expect.objectContaining({ code: 'PATCH_NOT_A_DIFF' }));
  });

  it('keeps absolute paths absolute whatever the strip level', () => {
    const text = [
      '--- a/ok.txt',
      '+++ b/ok.txt',
      '@@ -1 +1 @@',
      '-x',
      '+y',
      '--- /etc/passwd',
      '+++ /etc/passwd',
      '@@ -1 +1 @@',
      '-root',
      '+evil',
      '',
    ].join('\n');
    const p = parsePatch(text);
    expect(p.strip).toBe(1);
    expect(touchedPaths(p)).toEqual(['ok.txt', '/etc/passwd']);
    expect(touchedPaths(parsePatch(text.split('\n').slice(5).join('\n')))).toEqual(['/etc/passwd']);
  });
});

describe('unquotePath', () => {
  it('decodes git C-style quoting', () => {
    expect(unquotePath('"a/\\303\\244.txt"')).toBe('a/ä.txt');
    expect(unquotePath('"tab\\there \\"q\\" back\\\\slash"')).toBe('tab\there "q" back\\slash');
    expect(unquotePath('plain name.txt')).toBe('plain name.txt');
  });
});
