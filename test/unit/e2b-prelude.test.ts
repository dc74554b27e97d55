import { describe, expect, test } from 'vitest';
import { preludeError, PreludeReader } from '../../harness/sandbox/e2b/prelude.js';

const N = '0c5d2c1e-6f0b-4a43-9a57-5bd1b1f6e0a1';

function reader() {
  let outcomes = 0;
  const r = new PreludeReader(N, () => void outcomes++);
  return { r, outcomes: () => outcomes };
}

describe('e2b prelude outcome, read off the start of stdout', () => {
  test('the ok line is taken out wherever the chunks split it; the rest is the call’s', () => {
    const { r, outcomes } = reader();
    expect(r.feed(N.slice(0, 10))).toBe('');
    expect(r.feed(`${N.slice(10)} o`)).toBe('');
    expect(r.outcome).toBeNull();
    expect(r.feed('k\nhello ')).toBe('hello ');
    expect(r.feed('world\n')).toBe('world\n');
    expect(r.end()).toBe('');
    expect(r.outcome).toEqual({ ok: true });
    expect(outcomes()).toBe(1);
  });

  test('lines before the outcome (a login profile that prints) are the call’s; a look-alike without the nonce is not an outcome', () => {
    const { r } = reader();
    expect(r.feed(`Welcome\nffff fail home 1 /x\n${N} ok\nout`)).toBe('Welcome\nffff fail home 1 /x\nout');
    expect(r.outcome).toEqual({ ok: true });
  });

  test('a failure swallows the rest as the failed step’s output', () => {
    const { r, outcomes } = reader();
    expect(r.feed(`${N} fail 1 3\nredgreen: link/b.txt goes `)).toBe('');
    expect(r.feed('through a symlink (link)\n')).toBe('');
    expect(r.outcome).toEqual({ ok: false, step: 1, code: 3, output: 'redgreen: link/b.txt goes through a symlink (link)\n' });
    expect(outcomes()).toBe(1);
    const e = preludeError(
      r.outcome as never,
      [
        { args: [], what: 'a' },
        { args: [], what: 'b' },
      ],
      'sb',
    );
    expect(e).toMatchObject({ code: 'SANDBOX_PATH_UNSAFE', message: 'redgreen: link/b.txt goes through a symlink (link)' });
  });

  test('no outcome when the stream ends first: what was held back is handed on', () => {
    const { r, outcomes } = reader();
    expect(r.feed('partial')).toBe('');
    expect(r.end()).toBe('partial');
    expect(r.outcome).toBeNull();
    expect(outcomes()).toBe(0);
  });

  test('each failed step stands for the error it would have thrown on its own', () => {
    const steps = [{ args: ['put64', 'x'], what: 'unpacking an upload' }];
    expect(preludeError({ step: 0, code: 2, output: 'tar: bad\n' }, steps, 'sb')).toMatchObject({
      code: 'SANDBOX_FAILED',
      message: 'e2b: unpacking an upload failed in sandbox sb (exit 2): tar: bad',
    });
    expect(preludeError({ step: 'home', code: 1, output: '/elsewhere\n' }, steps, 'sb').message).toContain('home at /elsewhere');
    expect(preludeError({ step: 'install', code: 1, output: 'mkdir: denied\n' }, steps, 'sb')).toMatchObject({ code: 'SANDBOX_FAILED' });
  });
});
