import { lstatSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { rewriteSync, UMASK, writeNewSync } from '../../harness/sandbox/core/rewrite.js';
import { useTempDirs } from '../helpers/temp-dirs.js';

const temp = useTempDirs('rg-rewrite-');

describe('writing a file the harness owns', () => {
  test('a new file gets its bytes and its whole mode, whatever bits the umask holds', async () => {
    const dir = await temp();
    // Every mode bit the umask would take is asked for: the file must still have them.
    const mode = 0o700 | UMASK | 0o044;
    writeNewSync(path.join(dir, 'new'), Buffer.from('fresh'), mode);
    expect(readFileSync(path.join(dir, 'new'), 'utf8')).toBe('fresh');
    expect(lstatSync(path.join(dir, 'new')).mode & 0o777).toBe(mode & 0o777);
  });

  test('a file already there is rewritten whole, longer or shorter, with the mode asked for', async () => {
    const dir = await temp();
    const file = path.join(dir, 'old');
    writeFileSync(file, 'a much longer old content');
    writeNewSync(file, Buffer.from('short'), 0o600);
    expect(readFileSync(file, 'utf8')).toBe('short');
    expect(lstatSync(file).mode & 0o777).toBe(0o600);
    rewriteSync(file, 'longer than short', 0o640);
    expect(readFileSync(file, 'utf8')).toBe('longer than short');
    expect(lstatSync(file).mode & 0o777).toBe(0o640);
  });

  test('a rewrite cuts only a longer file and sets only a mode that differs, or one with special bits', async () => {
    const dir = await temp();
    const file = path.join(dir, 'same');
    writeFileSync(file, 'abcdef', { mode: 0o644 });
    rewriteSync(file, 'uvwxyz', 0o644);
    expect(readFileSync(file, 'utf8')).toBe('uvwxyz');
    rewriteSync(file, 'uvwxyz-longer');
    expect(readFileSync(file, 'utf8')).toBe('uvwxyz-longer');
    rewriteSync(file, 'ab', 0o2755);
    expect(readFileSync(file, 'utf8')).toBe('ab');
    expect(lstatSync(file).mode & 0o7777).toBe(0o2755);
    rewriteSync(file, 'cd', 0o2755);
    expect(lstatSync(file).mode & 0o7777).toBe(0o2755);
  });

  test('a symlink in the way is never followed: the write fails and its target is untouched', async () => {
    const dir = await temp();
    writeFileSync(path.join(dir, 'target'), 'keep');
    symlinkSync(path.join(dir, 'target'), path.join(dir, 'link'));
    expect(() => writeNewSync(path.join(dir, 'link'), Buffer.from('x'), 0o644)).toThrow(/ELOOP/);
    expect(() => rewriteSync(path.join(dir, 'link'), 'x')).toThrow(/ELOOP/);
    expect(readFileSync(path.join(dir, 'target'), 'utf8')).toBe('keep');
  });
});
