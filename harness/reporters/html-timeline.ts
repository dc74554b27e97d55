import { PHASES } from '../pipeline/result.js';
import type { ClientRun } from './html-data.js';
import { esc } from './html-sections.js';

/** One colour per phase, shared by the legend, the SVG and the fixture details. */
export const PHASE_COLORS: Record<(typeof PHASES)[number], string> = {
  agent: '#8e6cc4',
  create: '#9aa5b1',
  upload: '#5fa8d3',
  setup: '#e0a23b',
  red: '#d64545',
  patch: '#f0d34a',
  green: '#3f9c4a',
  destroy: '#5c6670',
};

const WIDTH = 1000;
const LANE = 14;
const GAP = 3;
const r1 = (n: number) => Math.round(n * 10) / 10;

function ticks(totalMs: number): number[] {
  const steps = [100, 250, 500, 1000, 2000, 5000, 10_000, 15_000, 30_000, 60_000, 120_000, 300_000, 600_000, 1_800_000, 3_600_000];
  const step = steps.find((s) => totalMs / s <= 10) ?? Math.ceil(totalMs / 10);
  return Array.from({ length: Math.floor(totalMs / step) + 1 }, (_, i) => i * step);
}

const label = (ms: number) => (ms < 1000 ? `${ms} ms` : ms < 120_000 ? `${ms / 1000}s` : `${Math.round(ms / 60_000)} min`);

export function timelineTotal(run: ClientRun): number {
  let total = 0;
  for (const f of run.fixtures) for (const [, start, dur] of f.spans) total = Math.max(total, start + dur);
  return Math.max(1, Math.ceil(total || run.durationMs));
}

/**
 * Every fixture's phases across the worker slots, as one SVG with one path per phase colour:
 * a few kilobytes of path data per hundred fixtures, and a single element for the browser to lay
 * out. Hovering is answered by the page script from the data, not by thousands of elements.
 */
export function renderTimeline(run: ClientRun, index: number): string {
  const total = timelineTotal(run);
  const height = run.lanes * (LANE + GAP) + GAP;
  const paths = new Map<number, string[]>();
  const starts: string[] = [];
  let drawn = 0;
  for (const f of run.fixtures) {
    const y = GAP + f.lane * (LANE + GAP);
    // A thin gap where a fixture starts, so back-to-back fixtures on one slot stay apart.
    if (f.spans.length) starts.push(`M${r1((f.spans[0]![1] / total) * WIDTH)} ${y}v${LANE}`);
    for (const [phase, start, dur] of f.spans) {
      const x = r1((start / total) * WIDTH);
      const w = Math.max(0.4, r1((dur / total) * WIDTH));
      (paths.get(phase) ?? paths.set(phase, []).get(phase)!).push(`M${x} ${y}h${w}v${LANE}h${-w}z`);
      drawn++;
    }
  }
  const stripes = Array.from({ length: run.lanes }, (_, i) =>
    i % 2 ? `M0 ${i * (LANE + GAP) + GAP / 2}h${WIDTH}v${LANE + GAP}h-${WIDTH}z` : '',
  ).join('');
  const shapes = [...paths].map(([p, d]) => `<path fill="${PHASE_COLORS[PHASES[p] ?? 'create']}" d="${d.join('')}"/>`).join('');
  const axis = ticks(total)
    .map((t) => `<span style="left:${r1((t / total) * 100)}%">${label(t)}</span>`)
    .join('');
  const caption = drawn
    ? `${run.fixtures.filter((f) => f.spans.length).length} fixtures on ${run.lanes} worker slot${run.lanes === 1 ? '' : 's'}, ${label(total)} in all`
    : 'no phase timings in this report';
  return `<figure class="timeline" data-run="${index}">
<figcaption>${esc(run.subject)} · ${esc(caption)}</figcaption>
<div class="tl-plot"><svg class="tl-svg" data-run="${index}" viewBox="0 0 ${WIDTH} ${height}" preserveAspectRatio="none" width="100%" height="${height}" role="img" aria-label="timeline of ${esc(run.subject)}"><path class="tl-lanes" d="${stripes}"/>${shapes}<path class="tl-sep" d="${starts.join('')}"/></svg></div>
<div class="tl-axis">${axis}</div>
</figure>`;
}

export function renderLegend(): string {
  return `<div class="legend">${PHASES.map((p) => `<span><i style="background:${PHASE_COLORS[p]}"></i>${p}</span>`).join('')}</div>`;
}
