import { afterEach, describe, expect, test, vi } from 'vitest';
import { RunSession } from '../../harness/commands/session.js';

afterEach(() => vi.restoreAllMocks());

describe('run session', () => {
  test('teardowns run in reverse order, each with what its setup made', async () => {
    const log: string[] = [];
    const session = new RunSession('stopping');
    const value = await session.run(async (s) => {
      const a = await s.step(
        'a',
        () => 'A',
        (made) => void log.push(`down a:${made}`),
      );
      const b = await s.step(
        'b',
        async () => 'B',
        (made) => void log.push(`down b:${made}`),
      );
      log.push(`body ${a}${b}`);
      return 42;
    });
    expect(value).toBe(42);
    expect(log).toEqual(['body AB', 'down b:B', 'down a:A']);
  });

  test('a setup that fails still tears down what came before, and its own teardown sees nothing made', async () => {
    const log: string[] = [];
    const session = new RunSession('stopping');
    await expect(
      session.run(async (s) => {
        await s.step(
          'backend',
          () => 'engine',
          (made) => void log.push(`close ${made}`),
        );
        await s.step(
          'transcript',
          () => Promise.reject(new Error('disk full')),
          (made) => void log.push(`transcript teardown:${String(made)}`),
        );
        log.push('never');
      }),
    ).rejects.toThrow('disk full');
    expect(log).toEqual(['transcript teardown:undefined', 'close engine']);
  });

  test('a failing teardown is reported and the others still run', async () => {
    const stderr = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    const log: string[] = [];
    await new RunSession('stopping').run(async (s) => {
      await s.step(
        'first',
        () => 1,
        () => void log.push('first'),
      );
      await s.step(
        'second',
        () => 2,
        () => Promise.reject(new Error('engine gone')),
      );
    });
    expect(log).toEqual(['first']);
    expect(stderr).toHaveBeenCalledWith('warning: teardown "second" failed: engine gone\n');
  });

  test('SIGINT aborts the session with a message; the handlers are gone afterwards', async () => {
    const stderr = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    const before = process.listenerCount('SIGINT');
    const beforeTerm = process.listenerCount('SIGTERM');
    const session = new RunSession('destroying sandboxes');
    await session.run(async (s) => {
      expect(process.listenerCount('SIGINT')).toBe(before + 1);
      expect(s.signal.aborted).toBe(false);
      process.emit('SIGINT', 'SIGINT');
      expect(s.signal.aborted).toBe(true);
    });
    expect(session.interrupted).toBe(true);
    expect(stderr).toHaveBeenCalledWith('\nSIGINT: stopping — destroying sandboxes (again to quit at once)\n');
    expect(process.listenerCount('SIGINT')).toBe(before);
    expect(process.listenerCount('SIGTERM')).toBe(beforeTerm);
  });
});
