import { describe, expect, test } from 'vitest';
import { protectedMatcher } from '../../harness/patch/protect.js';

describe('protectedMatcher', () => {
  const m = protectedMatcher(['test_*.py', 'conftest.py', 'src/**/*.test.ts', 'test/**', '.cargo/config*', 'package.json']);

  test('a glob without "/" matches the file name at any depth', () => {
    expect(m('test_x.py')).toBe(true);
    expect(m('pkg/tests/test_x.py')).toBe(true);
    expect(m('deep/conftest.py')).toBe(true);
    expect(m('package.json')).toBe(true);
  });

  test('a glob with "/" matches from the fixture root', () => {
    expect(m('src/duration.test.ts')).toBe(true);
    expect(m('src/a/b/c.test.ts')).toBe(true);
    expect(m('test/cart.test.js')).toBe(true);
    expect(m('.cargo/config.toml')).toBe(true);
    expect(m('lib/src/duration.test.ts')).toBe(false);
  });

  test('source files stay writable', () => {
    expect(m('src/duration.ts')).toBe(false);
    expect(m('calc.py')).toBe(false);
    expect(m('testing/x.py')).toBe(false);
    expect(protectedMatcher([])('anything')).toBe(false);
  });
});
