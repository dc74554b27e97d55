import { fanOut, type Reporter } from '../reporters/reporter.js';

/**
 * What a command runs with besides its options: where progress goes, and how it is stopped. The
 * CLI handles SIGINT/SIGTERM (and prints); the public API passes an AbortSignal and the user's
 * reporters, and nothing is printed or handled process-wide unless a reporter does it.
 */
export interface CommandContext {
  reporter: Required<Reporter>;
  signal?: AbortSignal;
  handleSignals: boolean;
}

export function commandContext(reporters: readonly Reporter[], control: { signal?: AbortSignal; handleSignals: boolean }): CommandContext {
  return { reporter: fanOut(reporters), handleSignals: control.handleSignals, ...(control.signal ? { signal: control.signal } : {}) };
}
