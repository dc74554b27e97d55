import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { FixtureEvent, RunObserver } from '../pipeline/events.js';

/**
 * Saves every patch a run graded next to its report (`reports/<run-id>/patches/<fixture>.patch`),
 * so an agent's work can be read, re-applied and re-graded without its transcript.
 */
export class PatchSaver implements RunObserver {
  /** The folder, made once for the run. */
  private made = false;

  constructor(private readonly dir: string) {}

  /**
   * Written at once, as the transcript's lines are: one small file per fixture, no promise each.
   * A copy that cannot be written is left out: the report and the transcript hold the patch.
   */
  onEvent(fixtureId: string, event: FixtureEvent): void {
    if (event.type !== 'patch' || !event.text) return;
    try {
      if (!this.made) mkdirSync(this.dir, { recursive: true });
      this.made = true;
      writeFileSync(path.join(this.dir, `${fixtureId}.patch`), event.text);
    } catch {
      // the reports folder is not writable: the run's own report.json says so when it is written
    }
  }
}
