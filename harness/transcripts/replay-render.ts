import { setTimeout as sleepMs } from 'node:timers/promises';
import { fixtureIds, readFixture, type TranscriptRun } from './reader.js';
import { paint, type Style } from './replay-format.js';
import { FixtureStory } from './replay-story.js';

export interface RenderOptions {
  /** 1 = as fast as it happened, 4 = four times faster, 0 = everything at once. */
  speed: number;
  /** Only these fixtures (default: all, in the run's order). */
  fixtures?: readonly string[];
  style: Style;
  write: (text: string) => void | Promise<void>;
  /** Injected by tests; real time otherwise. */
  sleep?: (ms: number) => Promise<void>;
}

export interface RenderSummary {
  fixtures: number;
  verdicts: Record<string, number>;
  /** Lines that could not be read (corrupted, unknown), torn last lines not counted. */
  problems: number;
  torn: number;
  /** Fixtures whose transcript has no final result. */
  unfinished: string[];
}

export function runHeader(run: TranscriptRun, style: Style): string {
  const s = run.state;
  const subject = typeof s.options.subject === 'string' ? ` of ${s.options.subject}` : '';
  const n = Object.keys(s.fixtures).length;
  return [
    paint(style, 'bold', `redgreen replay · ${s.runId} · ${s.mode}${subject} on ${s.backend} · ${s.status}`),
    paint(
      style,
      'dim',
      `recorded ${s.startedAt} by redgreen ${s.harness.version} (node ${s.harness.node}, ${s.harness.platform}) · ${n} fixture${n === 1 ? '' : 's'}`,
    ),
    '',
  ].join('\n');
}

/**
 * Tells each fixture's story from its transcript, fixture by fixture in the run's order, pausing
 * between lines as long as the run did (divided by `speed`). Reading is per fixture, so memory
 * stays flat however large the run.
 */
export async function renderRun(run: TranscriptRun, o: RenderOptions): Promise<RenderSummary> {
  const sleep = o.sleep ?? ((ms: number) => sleepMs(ms).then(() => undefined));
  const summary: RenderSummary = { fixtures: 0, verdicts: {}, problems: 0, torn: 0, unfinished: [] };
  await o.write(runHeader(run, o.style));
  for (const id of o.fixtures ?? fixtureIds(run)) {
    const ft = await readFixture(run, id);
    const story = new FixtureStory(ft, o.style);
    const chunk: string[] = [...story.header()];
    const problems = [...ft.problems].sort((a, b) => a.line - b.line);
    let prevT: number | null = null;
    for (const line of ft.lines) {
      while (problems.length && problems[0]!.line < line.line) chunk.push(...story.problem(problems.shift()!));
      if (o.speed > 0 && prevT !== null && line.t > prevT) {
        await o.write(joined(chunk));
        await sleep((line.t - prevT) / o.speed);
      }
      prevT = line.t;
      chunk.push(...story.line(line));
    }
    for (const p of problems) chunk.push(...story.problem(p));
    chunk.push(...story.end());
    await o.write(joined(chunk));
    summary.fixtures++;
    summary.problems += ft.problems.length;
    if (ft.torn !== null) summary.torn++;
    if (ft.result) summary.verdicts[ft.result.verdict] = (summary.verdicts[ft.result.verdict] ?? 0) + 1;
    else summary.unfinished.push(id);
  }
  const verdicts =
    Object.entries(summary.verdicts)
      .map(([v, n]) => `${v} ${n}`)
      .join(', ') || 'no verdicts';
  const damage = [
    summary.problems ? `${summary.problems} unreadable line(s)` : '',
    summary.torn ? `${summary.torn} torn last line(s)` : '',
    summary.unfinished.length ? `${summary.unfinished.length} unfinished` : '',
  ]
    .filter(Boolean)
    .join(', ');
  await o.write(`${summary.fixtures} fixture(s) replayed: ${verdicts}${damage ? ` · ${paint(o.style, 'yellow', damage)}` : ''}\n`);
  return summary;
}

/** Empties the pending lines into one string (one write per pause keeps output fast). */
function joined(chunk: string[]): string {
  if (!chunk.length) return '';
  const s = `${chunk.join('\n')}\n`;
  chunk.length = 0;
  return s;
}
