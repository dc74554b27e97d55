import { spawnSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { describe, expect, test } from 'vitest';
import { FramedStream, newToken } from '../../harness/sandbox/core/frames.js';
import { requestWords } from '../../harness/sandbox/core/command-server.js';

/** Feeds `bytes` to the stream in random chunks. */
function feed(s: FramedStream, bytes: Buffer, seed: number): void {
  let x = seed;
  for (let at = 0; at < bytes.length;) {
    x = (x * 1103515245 + 12345) % 2 ** 31;
    const n = 1 + (x % 97);
    s.push(bytes.subarray(at, at + n));
    at += n;
  }
}

describe('newToken', () => {
  test('is 16 random bytes in hex, never the same twice, across refills of its pool', () => {
    const tokens = Array.from({ length: 1000 }, () => newToken());
    for (const t of tokens) expect(t).toMatch(/^[0-9a-f]{32}$/);
    expect(new Set(tokens).size).toBe(tokens.length);
  });
});

describe('FramedStream', () => {
  test('a command’s bytes end exactly where its frame starts, wherever the chunks split them', async () => {
    for (let seed = 1; seed <= 50; seed++) {
      const token = randomBytes(16).toString('hex');
      // Output that holds the token's longest prefix (ended by a byte no hex token has) and ends with another: never the whole of it.
      const output = Buffer.concat([
        randomBytes(500),
        Buffer.from(`${token.slice(0, 31)}x`),
        randomBytes(300),
        Buffer.from(token.slice(0, 5)),
      ]);
      const s = new FramedStream('test');
      const got: Buffer[] = [];
      const frame = s.expect(token, (b) => got.push(Buffer.from(b)));
      feed(s, Buffer.concat([output, Buffer.from(`${token} 7 0 ok\n`)]), seed);
      expect(await frame).toEqual(['7', '0', 'ok']);
      const kept = Buffer.concat(got);
      expect(kept.length).toBe(output.length);
      expect(createHash('sha256').update(kept).digest('hex')).toBe(createHash('sha256').update(output).digest('hex'));
    }
  });

  test('output is passed on as it comes; only an end that could start the token waits for the next chunk', () => {
    const token = 'e'.repeat(16) + 'f'.repeat(16);
    const s = new FramedStream('test');
    const got: string[] = [];
    void s.expect(token, (b) => got.push(b.toString()));
    s.push(Buffer.from('up\n'));
    expect(got).toEqual(['up\n']);
    s.push(Buffer.from('ab' + 'e'.repeat(5)));
    expect(got).toEqual(['up\n', 'ab']);
    s.push(Buffer.from('x'));
    expect(got.join('')).toBe('up\nab' + 'e'.repeat(5) + 'x');
  });

  test('commands follow one another on the same stream', async () => {
    const s = new FramedStream('test');
    for (const [token, text] of [
      ['a'.repeat(32), 'first'],
      ['b'.repeat(32), ''],
    ] as const) {
      let got = '';
      const frame = s.expect(token, (b) => (got += b.toString()));
      s.push(Buffer.from(`${text}${token} 1 0 ok\n`));
      expect(await frame).toEqual(['1', '0', 'ok']);
      expect(got).toBe(text);
    }
  });

  test('bytes outside a command, after a frame, or a frame that never ends break the stream for good', async () => {
    const outside = new FramedStream('test');
    outside.push(Buffer.from('stray'));
    expect(outside.failed?.message).toMatch(/outside any command/);
    await expect(outside.expect('t'.repeat(32), () => undefined)).rejects.toThrow(/outside any command/);

    const after = new FramedStream('test');
    const token = 'c'.repeat(32);
    const frame = after.expect(token, () => undefined);
    after.push(Buffer.from(`${token} 1 0 ok\nmore`));
    expect(await frame).toEqual(['1', '0', 'ok']);
    expect(after.failed?.message).toMatch(/after a command's frame/);

    const endless = new FramedStream('test');
    const never = endless.expect(token, () => undefined);
    endless.push(Buffer.from(`${token} ${'9'.repeat(300)}`));
    await expect(never).rejects.toThrow(/without its end/);
  });

  test('a command being read fails with the stream', async () => {
    const s = new FramedStream('test');
    const frame = s.expect('d'.repeat(32), () => undefined);
    s.fail(new Error('the connection closed'));
    await expect(frame).rejects.toThrow('the connection closed');
  });
});

describe('the command server’s request words', () => {
  test('sh reads back every argument and variable verbatim: quotes, newlines, $, backslashes, "=" in a program name', () => {
    const argv = ['printf', '%s|', "it's", 'a "b"', '$HOME `x` $(y)', 'back\\slash', 'two\nlines\n', '', '*'];
    const words = requestWords({ argv, env: { A: "x'y\nz", B: '' }, cwd: '/tmp/a b' });
    // What the server does with them (server-script.ts), printing each word NUL-terminated.
    const r = spawnSync('/bin/sh', ['-c', `NL='\n'; eval "set -- $1"; printf '%s\\0' "$@"`, 'sh', words], { encoding: 'utf8' });
    expect(r.stdout.split('\0').slice(0, -1)).toEqual(['env', '-i', '--chdir=/tmp/a b', '--default-signal', "A=x'y\nz", 'B=', ...argv]);
    expect(words).not.toContain('\n');
    const odd = requestWords({ argv: ['X=1', 'arg'], env: {}, cwd: '/' });
    const r2 = spawnSync('/bin/sh', ['-c', `NL='\n'; eval "set -- $1"; printf '%s\\0' "$@"`, 'sh', odd], { encoding: 'utf8' });
    expect(r2.stdout.split('\0').slice(4, -1)).toEqual(['/bin/sh', '-c', 'exec "$@"', 'sh', 'X=1', 'arg']);
  });
});
