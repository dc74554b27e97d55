import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, readdir, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { guardPatch, unsafePathReason } from '../../harness/patch/guard.js';
import { parsePatch } from '../../harness/patch/parse.js';

const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(dirs.splice(0).map((d) => rm(d, { recursive: true, force: true })));
});

async function tempDir(prefix: string): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), prefix));
  dirs.push(dir);
  return dir;
}

/** A fixture tree: one source file. */
async function tree(): Promise<string> {
  const root = await tempDir('rg-guard-tree-');
  await mkdir(path.join(root, 'src'));
  await writeFile(path.join(root, 'src/calc.py'), 'x = 1\n');
  return root;
}

/** A git-style patch that creates `file` with one line. */
function newFilePatch(file: string): string {
  return [`diff --git a/${file} b/${file}`, 'new file mode 100644', '--- /dev/null', `+++ b/${file}`, '@@ -0,0 +1 @@', '+pwned', ''].join(
    '\n',
  );
}

async function expectUnsafe(text: string, root: string, message: RegExp): Promise<void> {
  await expect(guardPatch(parsePatch(text), root)).rejects.toMatchObject({
    name: 'RedgreenError',
    code: 'PATCH_UNSAFE',
    message: expect.stringMatching(message),
  });
}

describe('unsafePathReason', () => {
  it.each([
    ['', 'an empty path'],
    ['a\0b', 'a NUL byte'],
    ['/etc/passwd', 'an absolute path'],
    ['C:\\Windows\\x', 'an absolute path'],
    ['../x', 'a ".." component'],
    ['src/../../x', 'a ".." component'],
    ['src\\..\\..\\x', 'a ".." component'],
    ['.git/config', 'a path inside .git'],
    ['sub/.GIT/hooks/pre-commit', 'a path inside .git'],
  ])('refuses %j', (p, reason) => {
    expect(unsafePathReason(p)).toBe(reason);
  });

  it.each(['src/calc.py', '..hidden/x', 'a..b', '.github/workflows/ci.yml', '.gitignore', 'ä/ü.txt'])('accepts %j', (p) => {
    expect(unsafePathReason(p)).toBeNull();
  });
});

describe('guardPatch', () => {
  it('accepts a patch that stays inside the tree', async () => {
    const root = await tree();
    await expect(guardPatch(parsePatch(newFilePatch('src/new.py')), root)).resolves.toBeUndefined();
  });

  it('refuses ../ traversal', async () => {
    await expectUnsafe(newFilePatch('../outside.txt'), await tree(), /"\.\.\/outside\.txt": a "\.\." component/);
  });

  it('refuses an absolute path in a plain diff', async () => {
    const text = ['--- /etc/cron.d/x', '+++ /etc/cron.d/x', '@@ -1 +1 @@', '-a', '+b', ''].join('\n');
    await expectUnsafe(text, await tree(), /"\/etc\/cron\.d\/x": an absolute path/);
  });

  it('refuses a path inside .git (hooks run on the next git command)', async () => {
    await expectUnsafe(newFilePatch('.git/hooks/post-checkout'), await tree(), /inside \.git/);
  });

  it('refuses a rename whose source is outside the tree', async () => {
    const text = ['diff --git a/x b/y', 'similarity index 100%', 'rename from ../../etc/shadow', 'rename to y', ''].join('\n');
    await expectUnsafe(text, await tree(), /"\.\.\/\.\.\/etc\/shadow"/);
  });

  it('refuses a patch creating a symlink, made by real git', async () => {
    const repo = await tempDir('rg-guard-git-');
    const git = (...args: string[]) =>
      execFileSync('git', args, {
        cwd: repo,
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'pipe'],
        env: { PATH: process.env.PATH, HOME: repo, GIT_CONFIG_NOSYSTEM: '1' },
      });
    git('init', '-q');
    await symlink('/etc', path.join(repo, 'etc-link'));
    git('add', '-A');
    const text = git('diff', '--cached');
    expect(text).toContain('new file mode 120000');
    await expectUnsafe(text, await tree(), /creates or changes a symlink at "etc-link"/);
  });

  it('refuses a write through a symlink already in the tree, and nothing lands outside', async () => {
    const outside = await tempDir('rg-guard-outside-');
    const root = await tree();
    await symlink(outside, path.join(root, 'escape'));
    await expectUnsafe(newFilePatch('escape/x.txt'), root, /writes through the symlink "escape" \("escape\/x\.txt"\)/);
    expect(await readdir(outside)).toEqual([]);
  });

  it('refuses a write through a symlink deeper in the tree', async () => {
    const outside = await tempDir('rg-guard-outside-');
    const root = await tree();
    await symlink(outside, path.join(root, 'src/vendor'));
    await expectUnsafe(newFilePatch('src/vendor/lib/x.py'), root, /symlink "src\/vendor"/);
  });

  it('checks every file of a multi-file patch', async () => {
    const text = newFilePatch('src/ok.py') + newFilePatch('../../evil.py');
    await expectUnsafe(text, await tree(), /evil\.py/);
  });
});
