import { describe, expect, test } from 'vitest';
import { compareReports, DEFAULT_NOISE, renderComparison } from '../../harness/reporters/compare.js';
import { report } from '../helpers/reports.js';

describe('compare', () => {
  test('verdict changes come regressions first, then other changes, then improvements', () => {
    const a = report('A', {
      up: { verdict: 'not_green' },
      same: { verdict: 'valid' },
      down: { verdict: 'valid' },
      odd: { verdict: 'not_red' },
      broke: { verdict: 'valid' },
    });
    const b = report('B', {
      up: { verdict: 'valid' },
      same: { verdict: 'valid' },
      down: { verdict: 'not_green' },
      odd: { verdict: 'patch_error' },
      broke: { verdict: 'infra_error' },
    });
    const c = compareReports(a, b);
    expect(c.verdictChanges.map((v) => [v.fixtureId, v.kind])).toEqual([
      ['down', 'regression'],
      ['broke', 'regression'],
      ['odd', 'change'],
      ['up', 'improvement'],
    ]);
    expect(c.regressions).toBe(2);
    const text = renderComparison(c);
    expect(text.indexOf('down')).toBeLessThan(text.indexOf('up  '));
    expect(text).toContain('  ✘ regression   down      valid → not_green  not_green because of down');
    expect(text).toContain('✘ 2 regression(s)');
  });

  test('tests whose status changed are listed per fixture and phase', () => {
    const a = report('A', { f: { verdict: 'valid', green: { 't::a': 'passed', 't::b': 'passed' } } });
    const b = report('B', { f: { verdict: 'not_green', green: { 't::a': 'failed', 't::c': 'passed' } } });
    expect(compareReports(a, b).testChanges).toEqual([
      { fixtureId: 'f', phase: 'GREEN', testId: 't::a', from: 'passed', to: 'failed' },
      { fixtureId: 'f', phase: 'GREEN', testId: 't::b', from: 'passed', to: 'absent' },
      { fixtureId: 'f', phase: 'GREEN', testId: 't::c', from: 'absent', to: 'passed' },
    ]);
  });

  test(`timing changes count only beyond noise: at least ${DEFAULT_NOISE.ms} ms and ${DEFAULT_NOISE.ratio}×`, () => {
    const a = report('A', {
      slower: { verdict: 'valid', ms: 1000 },
      blip: { verdict: 'valid', ms: 20 },
      long: { verdict: 'valid', ms: 60_000 },
      faster: { verdict: 'valid', ms: 4000, red: 3000 },
    });
    const b = report('B', {
      slower: { verdict: 'valid', ms: 3000, red: 2400 },
      blip: { verdict: 'valid', ms: 45 },
      long: { verdict: 'valid', ms: 60_400 },
      faster: { verdict: 'valid', ms: 1000, red: 400 },
    });
    const c = compareReports(a, b);
    expect(c.timingChanges.map((t) => [t.fixtureId, t.phase])).toEqual([
      ['faster', 'red'],
      ['slower', 'red'],
    ]);
    expect(renderComparison(c)).toContain('slower  1.00s → 3.00s (+2.00s, mostly red)');
    expect(compareReports(a, b, { ms: 10, ratio: 2 }).timingChanges.map((t) => t.fixtureId)).toEqual(['faster', 'slower', 'blip']);
  });

  test('runs over different fixture sets report the difference instead of crashing; a missing fixture is no regression', () => {
    const a = report('A', { both: { verdict: 'valid' }, gone: { verdict: 'valid' } });
    const b = report('B', { both: { verdict: 'valid' }, added: { verdict: 'not_red' } });
    const c = compareReports(a, b);
    expect(c).toMatchObject({ onlyInA: ['gone'], onlyInB: ['added'], common: 1, regressions: 0, verdictChanges: [] });
    expect(renderComparison(c)).toContain('fixture sets differ: 1 in both (compared below); only in A (1): gone; only in B (1): added');
    const disjoint = compareReports(report('A', { x: { verdict: 'valid' } }), report('B', {}));
    expect(disjoint).toMatchObject({ common: 0, onlyInA: ['x'], onlyInB: [], regressions: 0 });
  });
});
