import type { TranscriptLine } from './line-schema.js';

/** Text helpers for the replay: sizes, durations, folded output, a little colour on a terminal. */
export interface Style {
  color: boolean;
  /** Show long output and patches in full instead of folding them. */
  full: boolean;
}

const CODES = { red: 31, green: 32, yellow: 33, dim: 2, bold: 1, cyan: 36 } as const;
export type Paint = keyof typeof CODES;

export function paint(style: Style, c: Paint, s: string): string {
  return style.color ? `\x1b[${CODES[c]}m${s}\x1b[0m` : s;
}

export function bytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${(n / 1024 / 1024).toFixed(1)} MiB`;
}

export function seconds(ms: number): string {
  return ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(2)}s`;
}

/** Keeps the head and the tail of long text, saying how much was folded and how to see it. */
export function fold(text: string, style: Style, keep: { head: number; tail: number }): string[] {
  const lines = text.replace(/\n$/, '').split('\n');
  if (style.full || lines.length <= keep.head + keep.tail + 1) return lines;
  const folded = lines.length - keep.head - keep.tail;
  return [...lines.slice(0, keep.head), paint(style, 'dim', `… ${folded} lines folded (--full shows them) …`), ...lines.slice(-keep.tail)];
}

export const indent = (prefix: string, lines: readonly string[]) => lines.map((l) => `${prefix}${l}`);

/** A command: what ran where, how it ended, and its output folded. */
export function formatCommand(e: Extract<TranscriptLine, { type: 'command' }>, workdir: string, style: Style): string[] {
  const cwd = e.cwd === '.' ? workdir : e.cwd.startsWith('/') ? e.cwd : `${workdir}/${e.cwd}`;
  const end = e.timedOut
    ? paint(style, 'red', `timed out after ${seconds(e.durationMs)}`)
    : `${e.exitCode === 0 ? paint(style, 'green', 'exit 0') : paint(style, 'red', `exit ${e.exitCode}`)}${e.signal ? ` (${e.signal})` : ''} · ${seconds(e.durationMs)}`;
  const out = [
    `  ${paint(style, 'bold', `$ ${e.command}`)}`,
    `    ${e.label} · cwd ${cwd} · env ${e.envKeys.join(', ') || '(none extra)'} · ${end}`,
  ];
  for (const [name, s] of [
    ['stdout', e.stdout],
    ['stderr', e.stderr],
  ] as const) {
    if (!s.bytes) continue;
    const note = [bytes(s.bytes), s.truncated ? `kept head and tail, sha256 ${s.sha256.slice(0, 12)}…` : '', s.utf8 ? '' : 'not UTF-8']
      .filter(Boolean)
      .join(', ');
    out.push(paint(style, 'dim', `    ${name} (${note}):`));
    out.push(...indent('    │ ', fold(s.text, style, { head: 4, tail: 8 })));
  }
  return out;
}

export function formatPatch(e: Extract<TranscriptLine, { type: 'patch' }>, style: Style): string[] {
  const sha = e.sha256 ? ` · sha256 ${e.sha256.slice(0, 12)}…` : '';
  const out = [`  patch from ${e.source}${sha}${e.files.length ? ` · files ${e.files.join(', ')}` : ''}`];
  if (e.reason) out.push(`    ${paint(style, 'yellow', e.reason)}`);
  if (e.text === null) out.push(paint(style, 'dim', '    (no patch text)'));
  else if (!e.text.trim()) out.push(paint(style, 'dim', '    (empty patch)'));
  else {
    const diff = fold(e.text, style, { head: 40, tail: 10 }).map((l) =>
      l.startsWith('+') && !l.startsWith('+++')
        ? paint(style, 'green', l)
        : l.startsWith('-') && !l.startsWith('---')
          ? paint(style, 'red', l)
          : l.startsWith('@@')
            ? paint(style, 'cyan', l)
            : l,
    );
    out.push(...indent('    ', diff));
  }
  return out;
}

const MARK: Record<string, string> = { passed: '✔', failed: '✘', error: '✘', skipped: '·', absent: ' ' };

/** RED against GREEN, one row per test; with many tests only the interesting rows unless --full. */
export function formatTestTable(red: Map<string, string> | null, green: Map<string, string> | null, style: Style): string[] {
  const ids = [...new Set([...(red?.keys() ?? []), ...(green?.keys() ?? [])])];
  if (!ids.length) return [];
  const rows = ids.map((id) => ({ id, r: red ? (red.get(id) ?? 'absent') : '—', g: green ? (green.get(id) ?? 'absent') : '—' }));
  const interesting = (x: (typeof rows)[number]) => x.r !== x.g || (x.g !== 'passed' && x.g !== '—') || (x.g === '—' && x.r !== 'passed');
  const shown = style.full || rows.length <= 30 ? rows : rows.filter(interesting);
  const width = Math.min(80, Math.max(4, ...shown.map((x) => x.id.length)));
  const cell = (s: string) => {
    const text = `${MARK[s] ?? ''} ${s}`.padEnd(10);
    return s === 'passed' ? paint(style, 'green', text) : s === 'failed' || s === 'error' ? paint(style, 'red', text) : text;
  };
  const out = [paint(style, 'dim', `    ${'test'.padEnd(width)}  ${'RED'.padEnd(10)}  GREEN`)];
  for (const x of shown) out.push(`    ${x.id.padEnd(width)}  ${cell(x.r)}  ${cell(x.g)}`);
  if (shown.length < rows.length)
    out.push(paint(style, 'dim', `    … ${rows.length - shown.length} more tests pass in both runs (--full lists them)`));
  return out;
}

export function formatCounts(counts: Record<string, number>): string {
  const failed = (counts.failed ?? 0) + (counts.errors ?? 0);
  return `${failed} failed / ${counts.passed ?? 0} passed${counts.skipped ? ` / ${counts.skipped} skipped` : ''}`;
}
