import { EXPECTED, type Verdict } from '../scoring/verdicts.js';
import { verdictCounts, type Report } from './report.js';

// The server-rendered parts of report.html: visible at once, before (and without) any script.

/** Text and attribute values in HTML: nothing in a fixture id, title or reason can become markup. */
export function esc(s: string | number): string {
  return String(s).replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

const ok = (v: Verdict) => EXPECTED.has(v);
const pct = (n: number, d: number) => (d ? `${Math.round((n / d) * 1000) / 10}%` : '—');
const secs = (ms: number) => (ms < 120_000 ? `${(ms / 1000).toFixed(2)}s` : `${(ms / 60_000).toFixed(1)} min`);

export function chip(verdict: Verdict, text: string = verdict): string {
  return `<span class="v v-${esc(verdict)}${ok(verdict) ? ' ok' : ''}">${esc(text)}</span>`;
}

function card(r: Report): string {
  const s = r.summary;
  const label = r.mode === 'selfcheck' ? 'valid' : 'resolved';
  const chips = verdictCounts(s.byVerdict)
    .sort((a, b) => b[1] - a[1])
    .map(([v, n]) => chip(v, `${v} ${n}`))
    .join(' ');
  const interrupted = r.interrupted
    ? `<p class="warn">Interrupted: ${r.unfinished.length} fixture(s) did not finish (${esc(r.unfinished.slice(0, 10).join(', '))}${r.unfinished.length > 10 ? ', …' : ''}).</p>`
    : '';
  return `<div class="card">
<h3>${esc(r.subject)} <small>${esc(r.mode)} on ${esc(r.backend)}</small></h3>
<p class="big"><b>${s.expected}/${s.denominators.all}</b> ${label} of all fixtures <span>${pct(s.expected, s.denominators.all)}</span></p>
<p class="big2"><b>${s.expected}/${s.denominators.scored}</b> ${label} excluding infra errors, agent errors and invalid fixtures <span>${pct(s.expected, s.denominators.scored)}</span></p>
<p class="chips">${chips || 'no fixtures'}</p>
<p>Tests before the patch: <b>${s.tests.red.failed}</b> failed / <b>${s.tests.red.passed}</b> passed · after: <b>${s.tests.green.failed}</b> failed / <b>${s.tests.green.passed}</b> passed</p>
${interrupted}<p class="meta">run <code>${esc(r.runId)}</code> · started ${esc(r.startedAt)} · ${secs(r.durationMs)} · concurrency ${r.concurrency}${r.repeat > 1 ? ` · repeat ${r.repeat}` : ''}</p>
</div>`;
}

export function renderSummary(reports: readonly Report[]): string {
  return `<section id="summary"><h2>Summary</h2><div class="cards">${reports.map(card).join('\n')}</div></section>`;
}

/** Every fixture id of every run, in the order the runs list them. */
export function fixtureUnion(reports: readonly Report[]): string[] {
  return [...new Set(reports.flatMap((r) => r.fixtures.map((f) => f.fixtureId)))];
}

/** Fixtures × runs; a cell links to the fixture's details. */
export function renderMatrix(reports: readonly Report[], ids: readonly string[]): string {
  const byRun = reports.map((r) => new Map(r.fixtures.map((f) => [f.fixtureId, f])));
  const head = reports.map((r) => `<th title="${esc(r.runId)}">${esc(r.subject)}</th>`).join('');
  const rows = ids.map((id, i) => {
    const cells = byRun.map((m) => {
      const f = m.get(id);
      return f ? `<td>${chip(f.verdict)}</td>` : '<td class="absent">—</td>';
    });
    const bad = byRun.some((m) => m.has(id) && !ok(m.get(id)!.verdict));
    return `<tr data-i="${i}" data-k="${esc(id.toLowerCase())}"${bad ? ' data-bad="1"' : ''}><td><a href="#f-${i}">${esc(id)}</a></td>${cells.join('')}</tr>`;
  });
  return `<section id="matrix"><h2>Verdict matrix <small>${ids.length} fixtures × ${reports.length} run${reports.length === 1 ? '' : 's'}</small></h2>
<div class="tools"><input type="search" id="filter" placeholder="filter fixtures by id" aria-label="filter fixtures"> <label><input type="checkbox" id="only-bad"> only fixtures that missed the expectation</label> <span id="shown"></span></div>
<div class="matrix-wrap"><table class="matrix"><thead><tr><th>fixture</th>${head}</tr></thead><tbody>
${rows.join('\n')}
</tbody></table></div></section>`;
}

/** Collapsed fixture details: the summary line now, the body when opened (the page script). */
export function renderFixtureList(reports: readonly Report[], ids: readonly string[]): string {
  const byRun = reports.map((r) => new Map(r.fixtures.map((f) => [f.fixtureId, f])));
  const items = ids.map((id, i) => {
    const results = byRun.map((m) => m.get(id));
    const first = results.find(Boolean);
    const chips = results.map((f) => (f ? chip(f.verdict) : '<span class="v absent">—</span>')).join('');
    const bad = results.some((f) => f && !ok(f.verdict));
    const time = first ? `<span class="ms">${secs(first.durationMs)}</span>` : '';
    return `<details class="fx" id="f-${i}" data-i="${i}" data-k="${esc(id.toLowerCase())}"${bad ? ' data-bad="1"' : ''}><summary>${chips} <b>${esc(id)}</b> <span class="title">${esc(first?.title ?? '')}</span>${time}</summary><div class="fx-body"></div></details>`;
  });
  return `<section id="fixtures"><h2>Fixtures</h2><p class="hint">Open a fixture for its issue, the patch as a diff, RED against GREEN and the folded logs.</p>
${items.join('\n')}
</section>`;
}
