import { describe, expect, test } from 'vitest';
import { renderMarkdown } from '../../harness/reporters/markdown.js';
import { report } from '../helpers/reports.js';

describe('summary.md', () => {
  test('states both denominators, lists misses with cells that cannot break the table, and cuts long lists', () => {
    const r = report('A', { ok: { verdict: 'valid' }, bad: { verdict: 'not_green' }, infra: { verdict: 'infra_error' } });
    r.fixtures[1]!.reason = 'a | pipe\nand a newline <b>bold</b>';
    const md = renderMarkdown([r]);
    expect(md).toContain('## ❌ redgreen selfcheck · oracle — valid 1/3');
    expect(md).toContain('**1/3** valid of all fixtures (33.3%) · **1/2** excluding infra errors, agent errors and invalid fixtures (50%)');
    expect(md).toContain('| `bad` | `not_green` | a \\| pipe and a newline &lt;b&gt;bold&lt;/b&gt; |');
    expect(md).toContain('<details><summary>All 3 fixtures</summary>');
    const many = report('A', Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`f${i}`, { verdict: 'not_green' }])));
    const cut = renderMarkdown([many], { maxRows: 10 });
    expect(cut).toContain('_… and 20 more (see report.html or report.json)_');
    expect(cut.length).toBeLessThan(65_536);
  });

  test('several runs: a verdict matrix of the fixtures they disagree on', () => {
    const a = report('A', { same: { verdict: 'valid' }, diff: { verdict: 'valid' } });
    const b = { ...report('B', { same: { verdict: 'valid' }, diff: { verdict: 'not_green' } }), subject: 'model-b' };
    const md = renderMarkdown([a, b]);
    expect(md).toContain('1 of 2 fixtures have the same verdict in every run; the 1 that differ:');
    expect(md).toContain('| fixture | oracle | model-b |');
    expect(md).toContain('| `diff` | ✔ `valid` | ✘ `not_green` |');
  });
});
