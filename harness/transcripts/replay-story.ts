import { EXPECTED } from '../scoring/verdicts.js';
import type { TranscriptLine } from './line-schema.js';
import type { FixtureTranscript, LineProblem } from './reader.js';
import { bytes, formatCommand, formatCounts, formatPatch, formatTestTable, paint, seconds, type Style } from './replay-format.js';

/**
 * One fixture's story, line by line: what a transcript line means in words. Stateful because a
 * command needs the sandbox's workdir and the verdict shows the RED/GREEN tables seen before it.
 */
export class FixtureStory {
  private workdir = '.';
  private red: Map<string, string> | null = null;
  private green: Map<string, string> | null = null;
  private verdictSeen = false;
  private t0: number | null = null;

  constructor(
    private readonly ft: FixtureTranscript,
    private readonly style: Style,
  ) {}

  header(): string[] {
    const first = this.ft.lines.find((l) => l.type === 'fixture');
    const title = first?.type === 'fixture' ? ` · ${first.title}` : '';
    const out = [paint(this.style, 'bold', `━━ ${this.ft.fixtureId}${title}`)];
    if (first?.type === 'fixture')
      out.push(
        paint(
          this.style,
          'dim',
          `   ${first.runner} on ${first.backend} · fixture sha256 ${first.fixtureSha256.slice(0, 16)}… · started ${first.ts}`,
        ),
      );
    if (this.ft.missing) out.push(paint(this.style, 'yellow', '   no transcript: this fixture never started'));
    return out;
  }

  problem(p: LineProblem): string[] {
    return [paint(this.style, 'yellow', `  ⚠ ${this.ft.file}:${p.line}: ${p.message}`)];
  }

  line(l: TranscriptLine): string[] {
    this.t0 ??= l.t;
    const at = paint(this.style, 'dim', `[+${seconds(l.t - this.t0).padStart(7)}]`);
    const s = this.style;
    switch (l.type) {
      case 'fixture':
        return [];
      case 'phase':
        return l.status === 'start'
          ? [`${at} ▸ ${l.phase}`]
          : l.durationMs !== undefined && l.durationMs >= 1
            ? [paint(s, 'dim', `${at}   ${l.phase} took ${seconds(l.durationMs)}`)]
            : [];
      case 'sandbox':
        this.workdir = l.workdir;
        return [`${at}   sandbox ${l.sandboxId} (${l.backend}), workdir ${l.workdir}`];
      case 'baseline':
        return [`${at}   RED baseline shared from run ${l.sharedFrom} (${l.state}): not run again here`];
      case 'upload':
        return [
          l.layer
            ? `${at}   workspace started copy-on-write from prepared layer ${l.layer.slice(0, 12)}… (${bytes(l.bytes)}, nothing copied${l.ahead ? '; its container started ahead' : ''})`
            : `${at}   uploaded ${l.files} files, ${bytes(l.bytes)}`,
        ];
      case 'cache':
        if (l.layer)
          return [
            `${at}   ${l.hit ? 'setup skipped: its result is in the prepared layer' : 'workspace kept as a prepared layer'} ${l.key.slice(0, 12)}…`,
          ];
        return [
          `${at}   setup cache ${l.hit ? 'hit' : 'miss'} ${l.key.slice(0, 12)}…${l.bytes ? ` (${bytes(l.bytes)}${l.paths.length ? `: ${l.paths.join(', ')}` : ''})` : ''}`,
        ];
      case 'command':
        return [`${at}`, ...formatCommand(l, this.workdir, s)];
      case 'file':
        return [
          `${at}   ${l.action === 'write' ? `wrote ${l.path} (${bytes(l.bytes)}, sha256 ${l.sha256.slice(0, 12)}…)` : `removed ${l.path}`}`,
        ];
      case 'patch':
        return [at, ...formatPatch(l, s)];
      case 'tests': {
        const statuses = new Map(l.tests.map((t) => [t.id, t.status]));
        if (l.phase === 'red') this.red = statuses;
        else this.green = statuses;
        const colour = l.state === 'pass' ? 'green' : l.state === 'fail' ? 'red' : 'yellow';
        return [
          `${at}   ${l.phase.toUpperCase()} tests${l.run > 1 ? ` #${l.run}` : ''}: ${paint(s, colour, l.state)} · ${formatCounts(l.counts)}`,
        ];
      }
      case 'error':
        return [`${at}   ${paint(s, 'red', `error${l.phase ? ` in ${l.phase}` : ''} [${l.code}]`)} ${l.message}`];
      case 'verdict': {
        this.verdictSeen = true;
        const ok = EXPECTED.has(l.verdict);
        return [
          ...formatTestTable(this.red, this.green, s),
          `${at} ${paint(s, ok ? 'green' : 'red', `verdict: ${l.verdict}`)} — ${l.reason}`,
        ];
      }
      case 'result': {
        const r = l.result;
        const patch = r.patch
          ? `patch ${r.patch.status}${r.patch.fuzzy ? ' (fuzzy)' : ''}${r.patch.tampered.length ? `, tampering kept out: ${r.patch.tampered.join(', ')}` : ''} · `
          : '';
        const phases = Object.entries(r.timings)
          .map(([p, ms]) => `${p} ${seconds(ms)}`)
          .join(', ');
        return [
          paint(
            s,
            'dim',
            `   ${patch}${seconds(r.durationMs)} in all${phases ? ` (${phases})` : ''}${r.attempts && r.attempts > 1 ? ` · ${r.attempts} attempts` : ''}`,
          ),
        ];
      }
    }
  }

  end(): string[] {
    const out: string[] = [];
    if (this.ft.torn !== null)
      out.push(paint(this.style, 'yellow', `  ⚠ ${this.ft.file}:${this.ft.torn}: torn last line (cut off while it was written), ignored`));
    if (!this.verdictSeen && !this.ft.missing)
      out.push(paint(this.style, 'yellow', '  ⋯ the transcript ends here without a verdict (the run was interrupted or killed)'));
    return [...out, ''];
  }
}
