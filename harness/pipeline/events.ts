import type { Verdict } from '../scoring/verdicts.js';
import type { Phase } from './result.js';

export interface StreamRecord {
  /** Kept text (head and tail when long). */
  text: string;
  bytes: number;
  sha256: string;
  truncated: boolean;
  utf8: boolean;
}

/** What a fixture's run tells its observers (the transcript, the live terminal view). */
export type FixtureEvent =
  | { type: 'fixture'; fixtureId: string; title: string; runner: string; backend: string; fixtureSha256: string }
  | { type: 'phase'; phase: Phase; status: 'start' | 'end'; durationMs?: number }
  | { type: 'sandbox'; sandboxId: string; backend: string; workdir: string }
  /**
   * `layer`: the workspace started copy-on-write from this prepared layer (nothing was copied);
   * `ahead`: in a container started over it before the fixture began (the scheduler's look ahead).
   */
  | { type: 'upload'; files: number; bytes: number; layer?: string; ahead?: boolean }
  /** The RED baseline came from an earlier run of the same command (several models: baseline-phase.ts). */
  | { type: 'baseline'; sharedFrom: string; state: string }
  /** `layer`: a prepared workspace (pipeline/workspace-layers.ts) rather than a setup cache entry. */
  | { type: 'cache'; key: string; hit: boolean; bytes: number; paths: string[]; layer?: boolean }
  | {
      type: 'command';
      phase: Phase;
      label: string;
      command: string;
      cwd: string;
      envKeys: string[];
      exitCode: number;
      signal: string | null;
      timedOut: boolean;
      durationMs: number;
      stdout: StreamRecord;
      stderr: StreamRecord;
    }
  | { type: 'file'; phase: Phase; path: string; bytes: number; sha256: string; action: 'write' | 'remove' }
  | {
      type: 'patch';
      source: string;
      sha256: string | null;
      text: string | null;
      status: string;
      reason?: string;
      files: string[];
      tampered: string[];
    }
  | { type: 'tests'; phase: Phase; run: number; state: string; counts: Record<string, number>; tests: { id: string; status: string }[] }
  | { type: 'verdict'; verdict: Verdict; reason: string }
  | { type: 'error'; phase: Phase | null; code: string; message: string };

export interface RunObserver {
  onFixtureStart?(fixtureId: string): void;
  onEvent?(fixtureId: string, event: FixtureEvent): void;
  onFixtureEnd?(fixtureId: string, result: import('./result.js').FixtureResult): void | Promise<void>;
}
