import { RedgreenError } from '../errors.js';
import type { RunState } from '../transcripts/schema.js';

/** What a run is made of, besides its fixtures' content: resume keeps the recorded ones. */
export interface RunSettings {
  ids: string[];
  backend: string;
  repeat: number;
}

const sameSet = (a: readonly string[], b: readonly string[]) => a.length === b.length && a.every((x) => b.includes(x));

/**
 * The settings a resumed run goes on with: the recorded fixture ids, backend and repeat count. A
 * flag that asks for something else is refused unless --force, so resuming never quietly widens,
 * narrows or moves a run. (Mode and patch source are checked with the fixtures' content.)
 */
export function resumeSettings(
  state: RunState,
  given: { ids: readonly string[]; backend?: string; repeat?: number; force: boolean },
): RunSettings {
  const recorded: RunSettings = {
    ids: Object.keys(state.fixtures),
    backend: state.backend,
    repeat: typeof state.options.repeat === 'number' ? state.options.repeat : 1,
  };
  const conflicts: string[] = [];
  if (given.ids.length && !sameSet(given.ids, recorded.ids))
    conflicts.push(`fixtures ${given.ids.join(', ')} (recorded: ${recorded.ids.join(', ')})`);
  if (given.backend !== undefined && given.backend !== recorded.backend)
    conflicts.push(`--backend ${given.backend} (recorded: ${recorded.backend})`);
  if (given.repeat !== undefined && given.repeat !== recorded.repeat)
    conflicts.push(`--repeat ${given.repeat} (recorded: ${recorded.repeat})`);
  if (conflicts.length && !given.force) {
    throw new RedgreenError(
      'USAGE',
      `run ${state.runId} was started with other settings: ${conflicts.join('; ')}`,
      'resume without them to go on as recorded, or add --force to resume with yours',
    );
  }
  return {
    ids: given.ids.length ? [...given.ids] : recorded.ids,
    backend: given.backend ?? recorded.backend,
    repeat: given.repeat ?? recorded.repeat,
  };
}
