import { execFileSync } from 'node:child_process';
import { createReadStream } from 'node:fs';
import { lstat, readFile, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { writeOutput } from '../../harness/commands/output-file.js';
import { useTempDirs } from '../helpers/temp-dirs.js';

const tempDir = useTempDirs('rg-output-');

describe('writing a report where the user pointed', () => {
  test('a regular or new file is replaced atomically; a pipe or a symlink is written through, never replaced', async () => {
    const dir = await tempDir();
    const plain = path.join(dir, 'junit.xml');
    await writeOutput(plain, 'one');
    await writeOutput(plain, 'two');
    expect(await readFile(plain, 'utf8')).toBe('two');

    // A FIFO stands in for /dev/stdout or /dev/null: still a FIFO afterwards, and the reader got the text.
    const fifo = path.join(dir, 'pipe');
    execFileSync('mkfifo', [fifo]);
    const received = new Promise<string>((resolve) => {
      let text = '';
      createReadStream(fifo, 'utf8')
        .on('data', (d) => (text += String(d)))
        .on('end', () => resolve(text));
    });
    await writeOutput(fifo, '<testsuites/>');
    expect(await received).toBe('<testsuites/>');
    expect((await lstat(fifo)).isFIFO()).toBe(true);

    const target = path.join(dir, 'target.md');
    const link = path.join(dir, 'link.md');
    await writeFile(target, 'old');
    await symlink(target, link);
    await writeOutput(link, 'new');
    expect((await lstat(link)).isSymbolicLink()).toBe(true);
    expect(await readFile(target, 'utf8')).toBe('new');
  });
});
