import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { withLock } from '../../harness/fixtures/lock.js';

describe('withLock (a shared cache written by one redgreen at a time)', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'rg-lock-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  test('holds the lock file (with its pid) while fn runs and removes it after, also when fn throws', async () => {
    const file = path.join(dir, 'mirror.lock');
    const seen = await withLock(file, async () => readFile(file, 'utf8'));
    expect(seen).toBe(`${process.pid}\n`);
    expect(existsSync(file)).toBe(false);
    await expect(withLock(file, async () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    expect(existsSync(file)).toBe(false);
  });

  test("a dead owner's lock is taken over", async () => {
    const file = path.join(dir, 'mirror.lock');
    const dead = spawnSync('true').pid!; // exited and reaped: its pid names no process now
    await writeFile(file, `${dead}\n`);
    expect(await withLock(file, async () => 'ran')).toBe('ran');
  });

  test("a live owner's lock is waited for, then LOCK_TIMEOUT names the file and its holder", async () => {
    const file = path.join(dir, 'mirror.lock');
    await writeFile(file, `${process.ppid}\n`);
    await expect(withLock(file, async () => 'ran', 250)).rejects.toMatchObject({
      code: 'LOCK_TIMEOUT',
      message: expect.stringContaining(`held by pid ${process.ppid}`),
    });
    expect(existsSync(file)).toBe(true); // not its to remove
  });
});
