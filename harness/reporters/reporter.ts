import type { FixtureEvent } from '../pipeline/events.js';
import type { FixtureResult } from '../pipeline/result.js';
import type { Report } from './report.js';

/** What a run is, told to reporters before any sandbox exists. */
export interface RunInfo {
  runId: string;
  mode: 'selfcheck' | 'run';
  /** What is graded: "oracle", a model, an agent command. */
  subject: string;
  /** Set when one command grades several models (a predictions file): name each run's lines. */
  model?: string;
  /** The backend asked for (`auto` is resolved later). */
  backend: string;
  concurrency: number;
  /** Fixtures this run will run (a resumed run: those left to run). */
  total: number;
  /** A resumed run: fixtures kept from the interrupted attempt. */
  kept: number;
  fixturesDir: string;
  shard?: { index: number; count: number };
}

/** A run that finished (or stopped): its report is on disk. */
export interface RunEnd {
  run: RunInfo;
  report: Report;
  reportPath: string;
  transcriptDir: string;
  exitCode: number;
}

/**
 * A reporter in the style of vitest and Playwright: an object with optional lifecycle hooks, one
 * per output format. A command may make several runs (one per model); `onEnd` sees them all.
 * Hooks are called in order and awaited where they return a promise.
 */
export interface Reporter {
  onRunStart?(run: RunInfo): void;
  onFixtureStart?(run: RunInfo, fixtureId: string): void;
  onFixtureEvent?(run: RunInfo, fixtureId: string, event: FixtureEvent): void;
  onFixtureEnd?(run: RunInfo, result: FixtureResult): void;
  onRunEnd?(end: RunEnd): void | Promise<void>;
  onEnd?(ends: readonly RunEnd[]): void | Promise<void>;
  /** Something the user should know that is not a fixture's result: a bad predictions line, a report not written (warning), what --write recorded (info). */
  onLog?(message: string, level: 'info' | 'warning'): void;
  /** Stops timers and clears live output; called once, whatever happened. */
  close?(): void;
}

/** Several reporters as one, each hook called on each in order. */
export function fanOut(reporters: readonly Reporter[]): Required<Reporter> {
  const each =
    <K extends keyof Reporter>(k: K) =>
    (...args: Parameters<NonNullable<Reporter[K]>>) => {
      for (const r of reporters) (r[k] as ((...a: unknown[]) => unknown) | undefined)?.call(r, ...args);
    };
  const eachAsync =
    <K extends 'onRunEnd' | 'onEnd'>(k: K) =>
    async (...args: Parameters<NonNullable<Reporter[K]>>) => {
      for (const r of reporters) await (r[k] as ((...a: unknown[]) => unknown) | undefined)?.call(r, ...args);
    };
  return {
    onRunStart: each('onRunStart'),
    onFixtureStart: each('onFixtureStart'),
    onFixtureEvent: each('onFixtureEvent'),
    onFixtureEnd: each('onFixtureEnd'),
    onRunEnd: eachAsync('onRunEnd'),
    onEnd: eachAsync('onEnd'),
    onLog: each('onLog'),
    close: each('close'),
  };
}
