import { expect, test } from 'vitest';
import { hasLabels } from '../../harness/sandbox/docker/labels.js';

test('hasLabels: every filter must hold, a bare key by presence, key=value by value', () => {
  const labels = { 'redgreen.run': 'r1', 'redgreen.session': 's1', empty: '' };
  expect(hasLabels(labels, ['redgreen.run', 'redgreen.session=s1'])).toBe(true);
  expect(hasLabels(labels, ['redgreen.run', 'redgreen.session=s2'])).toBe(false);
  expect(hasLabels(labels, ['redgreen.layer'])).toBe(false);
  expect(hasLabels(labels, ['empty', 'empty='])).toBe(true);
  expect(hasLabels(labels, ['redgreen.run=r1=x'])).toBe(false);
  expect(hasLabels(null, ['redgreen.run'])).toBe(false);
  expect(hasLabels(undefined, [])).toBe(true);
});
