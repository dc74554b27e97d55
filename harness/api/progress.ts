import type { FixtureEvent } from '../pipeline/events.js';
import type { FixtureResult } from '../pipeline/result.js';
import type { Reporter, RunEnd, RunInfo } from '../reporters/reporter.js';

/** Progress as plain events, for the API's `onProgress` listener (the reporters' hooks, one union). */
export type ProgressEvent =
  | { type: 'run-start'; run: RunInfo }
  | { type: 'fixture-start'; run: RunInfo; fixtureId: string }
  | { type: 'fixture-event'; run: RunInfo; fixtureId: string; event: FixtureEvent }
  | { type: 'fixture-end'; run: RunInfo; result: FixtureResult }
  | { type: 'run-end'; end: RunEnd }
  | { type: 'log'; level: 'info' | 'warning'; message: string };

export function listenerReporter(listener: (e: ProgressEvent) => void): Reporter {
  return {
    onRunStart: (run) => listener({ type: 'run-start', run }),
    onFixtureStart: (run, fixtureId) => listener({ type: 'fixture-start', run, fixtureId }),
    onFixtureEvent: (run, fixtureId, event) => listener({ type: 'fixture-event', run, fixtureId, event }),
    onFixtureEnd: (run, result) => listener({ type: 'fixture-end', run, result }),
    onRunEnd: (end) => listener({ type: 'run-end', end }),
    onLog: (message, level) => listener({ type: 'log', level, message }),
  };
}
