import { describe, expect, test } from 'vitest';
import { renderHtml } from '../../harness/reporters/html.js';
import { renderJunit } from '../../harness/reporters/junit-xml.js';
import { renderMarkdown } from '../../harness/reporters/markdown.js';
import { renderTable } from '../../harness/reporters/table.js';
import { fixture, reportOf } from '../helpers/reports.js';

const LINE = 'from _pytest.reports import TestReport';
const shown = `calc.py:4 [pytest-internals] ${LINE}`;

function run() {
  const forged = fixture('forged', { verdict: 'suspicious' });
  forged.reason = `failToPass 1/1, passToPass 1/1, but the patch reaches into test-framework internals: ${shown}`;
  forged.patch = {
    source: 'forger',
    sha256: null,
    status: 'applied',
    files: ['calc.py'],
    tampered: [],
    fuzzy: false,
    audit: [{ file: 'calc.py', line: 4, rule: 'pytest-internals', text: LINE }],
  };
  return reportOf('run-1', [forged, fixture('honest', { verdict: 'resolved' })], 'run');
}

describe('every report shows a suspicious patch with its lines', () => {
  test('terminal table', () => {
    const out = renderTable(run());
    expect(out).toContain('suspicious');
    expect(out).toContain(`suspicious forged: the patch reaches into test-framework internals:\n  ${shown}`);
    expect(out).toContain('resolved: 1/2 of all fixtures, 1/2 excluding');
  });

  test('markdown', () => {
    const md = renderMarkdown([run()]);
    expect(md).toContain('### Patches that reach into test-framework internals (1)');
    expect(md).toContain(`| \`forged\` | \`suspicious\` | ${shown} |`);
  });

  test('JUnit: a failure whose story lists the lines', () => {
    const xml = renderJunit([run()]);
    expect(xml).toMatch(/<failure type="suspicious" message="suspicious: failToPass 1\/1/);
    expect(xml).toContain(`audit: ${shown}`);
  });

  test('HTML: the lines travel with the fixture to the page', () => {
    const html = renderHtml([{ report: run() }]);
    expect(html).toContain(`"audit":[{"file":"calc.py","line":4,"rule":"pytest-internals","text":"${LINE}"}]`);
    expect(html).toContain('reaches into test-framework internals:');
  });
});
