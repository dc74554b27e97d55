import { stat } from 'node:fs/promises';
import path from 'node:path';
import pLimit from 'p-limit';
import { describeError } from '../errors.js';
import type { FixtureEvent } from '../pipeline/events.js';
import { openRun, readFixture } from '../transcripts/reader.js';
import { budgetFor, clip, type FixtureExtras } from './html-data.js';
import type { Report } from './report.js';

/** How many transcripts are read at once. */
const TRANSCRIPTS_AT_ONCE = 16;

const WANTED: ReadonlySet<string> = new Set(['patch', 'command']);

export interface ExtrasOutcome {
  extras?: Map<string, FixtureExtras>;
  /** Why the transcript could not be used (the page says it has no patches and logs). */
  warning?: string;
}

type Line = Extract<FixtureEvent, { type: 'patch' | 'command' }>;

/**
 * Adds a transcript line (or the event it records) to a fixture's extras, clipped to the page's
 * budget (budgetFor the report's number of fixtures), so a thousand fixtures of long logs never
 * sit in memory at once.
 */
function addLine(e: FixtureExtras, l: Line, budget: ReturnType<typeof budgetFor>): void {
  if (l.type === 'patch') {
    e.patch = l.text === null ? null : clip(l.text, budget.patch);
    return;
  }
  const perStream = Math.ceil(budget.logs / 2); // a RED and a GREEN run: the page cuts further when there are more
  e.logs.push({
    phase: l.phase,
    label: l.label,
    command: l.command,
    cwd: l.cwd,
    exitCode: l.exitCode,
    timedOut: l.timedOut,
    durationMs: l.durationMs,
    stdout: { text: clip(l.stdout.text, perStream), bytes: l.stdout.bytes },
    stderr: { text: clip(l.stderr.text, perStream), bytes: l.stderr.bytes },
  });
}

/**
 * The extras of a run's fixtures taken from its events as they happen, as loadExtras would read
 * them back from the transcript, so the page of a run needs no second read of a thousand files.
 * Made for the number of fixtures the report will hold (the budget depends on it).
 */
export class ExtrasCollector {
  readonly extras = new Map<string, FixtureExtras>();
  private readonly budget: ReturnType<typeof budgetFor>;

  constructor(readonly totalFixtures: number) {
    this.budget = budgetFor(totalFixtures);
  }

  onEvent(fixtureId: string, event: FixtureEvent): void {
    if (event.type !== 'patch' && event.type !== 'command') return;
    let e = this.extras.get(fixtureId);
    if (!e) this.extras.set(fixtureId, (e = { patch: null, logs: [] }));
    addLine(e, event, this.budget);
  }
}

/**
 * The patch texts and command outputs of a report's fixtures, from the run's transcript folder;
 * those `known` already (collected during the run for the same total) are not read again. The
 * report stands without them: a missing or unreadable transcript is a warning, not an error.
 */
export async function loadExtras(
  report: Report,
  transcriptDir: string,
  totalFixtures = report.fixtures.length,
  known: ReadonlyMap<string, FixtureExtras> = new Map(),
): Promise<ExtrasOutcome> {
  // All collected during the run (the page of a run just made): nothing to read back, not even run.json.
  if (report.fixtures.every((f) => known.has(f.fixtureId)))
    return { extras: new Map(report.fixtures.map((f) => [f.fixtureId, known.get(f.fixtureId)!])) };
  if (!(await stat(path.join(transcriptDir, 'run.json')).catch(() => null))) return { warning: `no transcript at ${transcriptDir}` };
  const budget = budgetFor(totalFixtures);
  try {
    const run = await openRun(transcriptDir);
    if (run.state.runId !== report.runId)
      return { warning: `${transcriptDir} is the transcript of ${run.state.runId}, not ${report.runId}` };
    const extras = new Map<string, FixtureExtras>();
    const recorded = report.fixtures.filter((f) => run.state.fixtures[f.fixtureId]);
    // A few transcripts read at once (each clipped as it is read), not a thousand one after another.
    await pLimit(TRANSCRIPTS_AT_ONCE).map(recorded, async (f) => {
      const had = known.get(f.fixtureId);
      if (had) return void extras.set(f.fixtureId, had);
      const ft = await readFixture(run, f.fixtureId, WANTED);
      const e: FixtureExtras = { patch: null, logs: [] };
      for (const l of ft.lines) if (l.type === 'patch' || l.type === 'command') addLine(e, l, budget);
      extras.set(f.fixtureId, e);
    });
    return { extras };
  } catch (e) {
    return { warning: `transcript ${transcriptDir} not used: ${describeError(e)}` };
  }
}
