import { PHASES } from '../pipeline/result.js';
import { EXPECTED } from '../scoring/verdicts.js';
import { CLIENT_SCRIPT } from './html-client.js';
import { CSS } from './html-css.js';
import { clientRun, embedJson, type HtmlRun } from './html-data.js';
import { esc, fixtureUnion, renderFixtureList, renderMatrix, renderSummary } from './html-sections.js';
import { PHASE_COLORS, renderLegend, renderTimeline, timelineTotal } from './html-timeline.js';

export type { HtmlRun } from './html-data.js';

/**
 * report.html: one self-contained file (inline CSS, script and data; no request leaves the page)
 * with the summary and its denominators, the verdict matrix (fixtures × runs), the timeline of
 * every fixture's phases across worker slots, and per fixture its details, built when opened.
 */
export function renderHtml(runs: readonly HtmlRun[], options: { title?: string } = {}): string {
  if (!runs.length) throw new Error('renderHtml needs at least one report');
  const reports = runs.map((r) => r.report);
  const ids = fixtureUnion(reports);
  const totalFixtures = reports.reduce((a, r) => a + r.fixtures.length, 0);
  const clientRuns = runs.map((r) => clientRun(r, totalFixtures));
  const data = {
    ids,
    runs: clientRuns,
    totals: clientRuns.map(timelineTotal),
    phases: PHASES,
    colors: PHASES.map((p) => PHASE_COLORS[p]),
    expected: [...EXPECTED],
  };
  const title =
    options.title ??
    (reports.length === 1
      ? `redgreen ${reports[0]!.mode} · ${reports[0]!.subject} · ${reports[0]!.runId}`
      : `redgreen · ${reports.length} runs`);
  const missing = runs.filter((r) => !r.extras).map((r) => r.report.runId);
  const note = missing.length
    ? `<p class="warn">No transcript found for ${esc(missing.join(', '))}: patches and logs are not included.</p>`
    : '';
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:">
<title>${esc(title)}</title>
<style>${CSS}</style>
</head>
<body>
<header><h1>${esc(title)}</h1><p>${reports.map((r) => `${esc(r.mode)} of ${esc(r.subject)} on ${esc(r.backend)}, ${esc(r.startedAt)}`).join(' · ')}</p>${note}</header>
<main>
${renderSummary(reports)}
${renderMatrix(reports, ids)}
<section id="timeline"><h2>Timeline <small>every fixture's phases across the worker slots</small></h2>
${renderLegend()}
${clientRuns.map(renderTimeline).join('\n')}
</section>
${renderFixtureList(reports, ids)}
</main>
<div id="tip" hidden></div>
<script type="application/json" id="rg-data">${embedJson(data)}</script>
<script>${CLIENT_SCRIPT}</script>
</body>
</html>
`;
}
