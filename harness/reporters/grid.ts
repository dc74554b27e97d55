/**
 * A boxed table of single-line cells, one rule between rows. Written here rather than taken from
 * a table library: the final table of a run has a row per fixture, and a general layout engine
 * spent a quarter of a millisecond per row (a second at 3,000 fixtures) on what is padding.
 */
export function renderGrid(head: readonly string[], rows: readonly (readonly string[])[]): string {
  const cell = (s: string) => s.replace(/\s*\n\s*/g, ' ');
  const all = [head, ...rows].map((r) => head.map((_, i) => cell(r[i] ?? '')));
  const widths = head.map((_, i) => Math.max(...all.map((r) => r[i]!.length)));
  const rule = (l: string, m: string, r: string) => `${l}${widths.map((w) => '─'.repeat(w + 2)).join(m)}${r}`;
  const line = (r: string[]) => `│${r.map((c, i) => ` ${c.padEnd(widths[i]!)} `).join('│')}│`;
  const out = [rule('┌', '┬', '┐')];
  all.forEach((r, i) => {
    if (i > 0) out.push(rule('├', '┼', '┤'));
    out.push(line(r));
  });
  out.push(rule('└', '┴', '┘'));
  return out.join('\n');
}
