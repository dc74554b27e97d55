import { describe, expect, it } from 'vitest';
import { emptyEnvironOf, fieldsOf } from '../../harness/sandbox/host/kill.js';

/**
 * A /proc/<pid>/stat line as Linux 6 writes it (52 fields), with the state, flags and the ends of
 * the environment chosen; its command name holds spaces and parentheses, as one may.
 */
function stat(state: string, envStart: number, envEnd: number, flags = 0x400000): string {
  const f = ['24842', '(a (b) c)', state, '1', '24842', '24842', '0', '-1', String(flags)];
  f.push(...'169 0 0 0 0 0 0 0 20 0 1 0 2518394 2990080 395 18446744073709551615'.split(' '));
  f.push(...'94496076992512 94496077010441 140720707819040 0 0 0 0 6 0 1 0 0 17 0 0 0 0 0 0'.split(' '));
  f.push(...'94496077024528 94496077025792 94496554602496 140720707824754 140720707824772'.split(' '));
  f.push(String(envStart), String(envEnd), '0');
  return f.join(' ') + '\n';
}

describe('an empty read of a process environment', () => {
  const START = 140720707824772;

  it('reads the fields after the command name, whatever it holds', () => {
    const f = fieldsOf(stat('S', START, START + 10));
    expect(f[0]).toBe('S');
    expect([f[47], f[48]]).toEqual([String(START), String(START + 10)]);
  });

  it('is an exec under way while the environment has no end yet, or both its ends at one place in a running process', () => {
    expect(emptyEnvironOf(fieldsOf(stat('R', 0, 0)))).toBe('exec');
    // The kernel sets both ends after the arguments, then moves the end past each string it lays out.
    expect(emptyEnvironOf(fieldsOf(stat('R', START, START)))).toBe('exec');
    expect(emptyEnvironOf(fieldsOf(stat('D', START, START)))).toBe('exec');
  });

  it('is a process that really has no environment (env -i) once it is not running with both ends at one place', () => {
    expect(emptyEnvironOf(fieldsOf(stat('S', START, START)))).toBe('none');
    expect(emptyEnvironOf(fieldsOf(stat('T', START, START)))).toBe('none');
  });

  it('is read again when the environment has a length (the read saw the memory an exec left)', () => {
    expect(emptyEnvironOf(fieldsOf(stat('S', START, START + 900)))).toBe('reread');
  });

  it('is never ours for a process gone, a zombie or a kernel thread', () => {
    expect(emptyEnvironOf(null)).toBe('none');
    expect(emptyEnvironOf(fieldsOf(stat('Z', 0, 0)))).toBe('none');
    expect(emptyEnvironOf(fieldsOf(stat('R', 0, 0, 0x00200000)))).toBe('none');
  });
});
