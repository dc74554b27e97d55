import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { FixtureEvent, RunObserver } from '../pipeline/events.js';

/**
 * Saves every graded patch next to the report (`reports/<run-id>/patches/<fixture>.patch`), so an
 * agent's work can be read, re-applied and re-graded without its transcript.
 */
export class PatchSaver implements RunObserver {
  private readonly writes: Promise<unknown>[] = [];

  constructor(private readonly dir: string) {}

  /** The folder, made once for the run. */
  private made: Promise<unknown> | null = null;

  onEvent(fixtureId: string, event: FixtureEvent): void {
    if (event.type !== 'patch' || !event.text) return;
    const text = event.text;
    this.made ??= mkdir(this.dir, { recursive: true });
    this.writes.push(this.made.then(() => writeFile(path.join(this.dir, `${fixtureId}.patch`), text)));
  }

  async flush(): Promise<void> {
    await Promise.allSettled(this.writes);
  }
}
