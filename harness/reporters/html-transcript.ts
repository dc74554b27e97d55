import { stat } from 'node:fs/promises';
import path from 'node:path';
import pLimit from 'p-limit';
import { FILES_AT_ONCE } from '../fixtures/load.js';
import { describeError } from '../errors.js';
import { openRun, readFixture } from '../transcripts/reader.js';
import { budgetFor, clip, type FixtureExtras } from './html-data.js';
import type { Report } from './report.js';

const WANTED: ReadonlySet<string> = new Set(['patch', 'command']);

export interface ExtrasOutcome {
  extras?: Map<string, FixtureExtras>;
  /** Why the transcript could not be used (the page says it has no patches and logs). */
  warning?: string;
}

/**
 * The patch texts and command outputs of a report's fixtures, from the run's transcript folder.
 * The report stands without them: a missing or unreadable transcript is a warning, not an error.
 */
export async function loadExtras(report: Report, transcriptDir: string, totalFixtures = report.fixtures.length): Promise<ExtrasOutcome> {
  // Clipped while reading, so a thousand fixtures of long logs never sit in memory at once.
  const budget = budgetFor(totalFixtures);
  const perStream = Math.ceil(budget.logs / 2); // a RED and a GREEN run: the page cuts further when there are more
  if (!(await stat(path.join(transcriptDir, 'run.json')).catch(() => null))) return { warning: `no transcript at ${transcriptDir}` };
  try {
    const run = await openRun(transcriptDir);
    if (run.state.runId !== report.runId)
      return { warning: `${transcriptDir} is the transcript of ${run.state.runId}, not ${report.runId}` };
    const extras = new Map<string, FixtureExtras>();
    const recorded = report.fixtures.filter((f) => run.state.fixtures[f.fixtureId]);
    // A few transcripts read at once (each clipped as it is read), not a thousand one after another.
    await pLimit(FILES_AT_ONCE).map(recorded, async (f) => {
      const ft = await readFixture(run, f.fixtureId, WANTED);
      const e: FixtureExtras = { patch: null, logs: [] };
      for (const l of ft.lines) {
        if (l.type === 'patch') e.patch = l.text === null ? null : clip(l.text, budget.patch);
        else if (l.type === 'command') {
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
      }
      extras.set(f.fixtureId, e);
    });
    return { extras };
  } catch (e) {
    return { warning: `transcript ${transcriptDir} not used: ${describeError(e)}` };
  }
}
