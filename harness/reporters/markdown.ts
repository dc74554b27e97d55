import type { FixtureResult } from '../pipeline/result.js';
import { EXPECTED, type Verdict } from '../scoring/verdicts.js';
import { auditedFixtures } from './audit.js';
import { sharedBaselineNote, verdictCounts, type Report } from './report.js';

/**
 * summary.md: for pull-request comments and GitHub job summaries. GitHub caps a comment at 65,536
 * characters, so long lists are cut (`maxRows`) and say how many rows were left out.
 */
export interface MarkdownOptions {
  maxRows?: number;
}

const expected = (v: Verdict) => EXPECTED.has(v);

/** A table cell: no pipes, newlines or HTML can break out of it. */
export function cell(s: string, max = 200): string {
  const one = s.replace(/\s*\n\s*/g, ' ').trim();
  const cut = one.length > max ? `${one.slice(0, max - 1)}…` : one;
  return cut.replace(/\\/g, '\\\\').replace(/\|/g, '\\|').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

const pct = (n: number, d: number) => (d ? `${Math.round((n / d) * 1000) / 10}%` : '—');
const secs = (ms: number) => `${(ms / 1000).toFixed(2)}s`;
const counts = (p: FixtureResult['red']) => (p ? `${p.counts.failed + p.counts.errors} failed / ${p.counts.passed} passed` : '—');

function table(head: string[], rows: string[][], maxRows: number): string[] {
  const out = [
    `| ${head.join(' | ')} |`,
    `|${head.map(() => ' --- ').join('|')}|`,
    ...rows.slice(0, maxRows).map((r) => `| ${r.join(' | ')} |`),
  ];
  if (rows.length > maxRows) out.push('', `_… and ${rows.length - maxRows} more (see report.html or report.json)_`);
  return out;
}

function runSection(r: Report, level: string, maxRows: number, withAll: boolean): string[] {
  const s = r.summary;
  const label = r.mode === 'selfcheck' ? 'valid' : 'resolved';
  const ok = s.expected === s.denominators.all && !r.interrupted;
  const out = [
    `${level} ${ok ? '✅' : '❌'} redgreen ${r.mode} · ${cell(r.subject)} — ${label} ${s.expected}/${s.denominators.all}`,
    '',
    `**${s.expected}/${s.denominators.all}** ${label} of all fixtures (${pct(s.expected, s.denominators.all)}) · **${s.expected}/${s.denominators.scored}** excluding infra errors, agent errors and invalid fixtures (${pct(s.expected, s.denominators.scored)})`,
    '',
    ...table(
      ['verdict', 'fixtures'],
      verdictCounts(s.byVerdict)
        .sort((a, b) => b[1] - a[1])
        .map(([v, n]) => [`\`${v}\``, String(n)]),
      maxRows,
    ),
    '',
    `Tests before the patch: ${s.tests.red.failed} failed / ${s.tests.red.passed} passed · after: ${s.tests.green.failed} failed / ${s.tests.green.passed} passed`,
    ...(sharedBaselineNote(r) ? [sharedBaselineNote(r)!] : []),
    `Run \`${cell(r.runId)}\` on \`${cell(r.backend)}\` · concurrency ${r.concurrency} · ${secs(r.durationMs)}${r.interrupted ? ` · **interrupted**: ${r.unfinished.length} unfinished` : ''}`,
  ];
  const missed = r.fixtures.filter((f) => !expected(f.verdict));
  if (missed.length) {
    out.push(
      '',
      `${level}# Did not meet the expectation (${missed.length})`,
      '',
      ...table(
        ['fixture', 'verdict', 'reason'],
        missed.map((f) => [`\`${cell(f.fixtureId)}\``, `\`${f.verdict}\``, cell(f.reason)]),
        maxRows,
      ),
    );
  }
  const audited = auditedFixtures(r.fixtures);
  if (audited.length) {
    out.push(
      '',
      `${level}# Patches that reach into test-framework internals (${audited.length})`,
      '',
      ...table(
        ['fixture', 'verdict', 'added line'],
        audited.flatMap((a) => a.lines.map((l) => [`\`${cell(a.fixtureId)}\``, `\`${a.verdict}\``, cell(l)])),
        maxRows,
      ),
    );
  }
  if (withAll) {
    const rows = r.fixtures.map((f) => [
      `\`${cell(f.fixtureId)}\``,
      `${expected(f.verdict) ? '✔' : '✘'} \`${f.verdict}\``,
      counts(f.red),
      counts(f.green),
      secs(f.durationMs),
    ]);
    out.push(
      '',
      `<details><summary>All ${r.fixtures.length} fixtures</summary>`,
      '',
      ...table(['fixture', 'verdict', 'RED', 'GREEN', 'time'], rows, maxRows),
      '',
      '</details>',
    );
  }
  return out;
}

/** Fixtures × runs, only the rows where the runs disagree (the rest is counted). */
function matrix(reports: readonly Report[], maxRows: number): string[] {
  const ids = [...new Set(reports.flatMap((r) => r.fixtures.map((f) => f.fixtureId)))];
  const byRun = reports.map((r) => new Map(r.fixtures.map((f) => [f.fixtureId, f.verdict])));
  const rows = ids.map((id) => ({ id, verdicts: byRun.map((m) => m.get(id)) })).filter((row) => new Set(row.verdicts).size > 1);
  const same = ids.length - rows.length;
  const shown = (v: Verdict | undefined) => (v === undefined ? '—' : `${expected(v) ? '✔' : '✘'} \`${v}\``);
  return [
    '## Verdict matrix',
    '',
    `${same} of ${ids.length} fixtures have the same verdict in every run; the ${rows.length} that differ:`,
    '',
    ...(rows.length
      ? table(
          ['fixture', ...reports.map((r) => cell(r.subject))],
          rows.map((row) => [`\`${cell(row.id)}\``, ...row.verdicts.map(shown)]),
          maxRows,
        )
      : []),
  ];
}

export function renderMarkdown(reports: readonly Report[], options: MarkdownOptions = {}): string {
  const maxRows = options.maxRows ?? 100;
  if (reports.length === 1) return `${runSection(reports[0]!, '##', maxRows, true).join('\n')}\n`;
  const sections = reports.flatMap((r) => ['', ...runSection(r, '###', Math.min(maxRows, 20), false)]);
  return `${[...matrix(reports, maxRows), '', '## Runs', ...sections].join('\n')}\n`;
}
