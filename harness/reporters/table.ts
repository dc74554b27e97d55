import { auditedFixtures } from './audit.js';
import { renderGrid } from './grid.js';
import { sharedBaselineNote, verdictCounts, type Report } from './report.js';

const counts = (p: { counts: { passed: number; failed: number; errors: number } } | null) =>
  p ? `${p.counts.failed + p.counts.errors} failed / ${p.counts.passed} passed` : '—';

/** The final table: one row per fixture, then the totals with their denominators. */
const ratio = (c: { passed: number; total: number } | null | undefined) => (c ? `${c.passed}/${c.total}` : '—');

export function renderTable(report: Report): string {
  const run = report.mode === 'run';
  const head = ['fixture', 'verdict', ...(run ? ['failToPass', 'passToPass'] : []), 'RED', 'GREEN', 'time'];
  const rows = report.fixtures.map((f) => {
    const graded = run ? [ratio(f.failToPass), ratio(f.passToPass)] : [];
    return [f.fixtureId, f.verdict, ...graded, counts(f.red), counts(f.green), `${(f.durationMs / 1000).toFixed(2)}s`];
  });
  const s = report.summary;
  const label = report.mode === 'selfcheck' ? 'valid' : 'resolved';
  const lines = [
    renderGrid(head, rows),
    `tests before: ${s.tests.red.failed} failed / ${s.tests.red.passed} passed   after: ${s.tests.green.failed} failed / ${s.tests.green.passed} passed`,
    `${label}: ${s.expected}/${s.denominators.all} of all fixtures, ${s.expected}/${s.denominators.scored} excluding infra errors, agent errors and invalid fixtures` +
      `   (${verdictCounts(s.byVerdict)
        .map(([v, n]) => `${v} ${n}`)
        .join(', ')})`,
  ];
  const shared = sharedBaselineNote(report);
  if (shared) lines.push(shared);
  for (const a of auditedFixtures(report.fixtures)) {
    lines.push(`${a.verdict} ${a.fixtureId}: the patch reaches into test-framework internals:`, ...a.lines.map((l) => `  ${l}`));
  }
  if (report.interrupted) lines.push(`interrupted: ${report.unfinished.length} fixture(s) did not finish: ${report.unfinished.join(', ')}`);
  return lines.join('\n');
}
