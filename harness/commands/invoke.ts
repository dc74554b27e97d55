import type { Reporter } from '../reporters/reporter.js';
import { commandContext, type CommandContext } from './context.js';
import type { ExecuteOutcome } from './execute.js';

/**
 * Runs a command's runs with its reporters, for the CLI and the API alike: `onEnd` sees every
 * run (a table or JSON over several models), and `close` stops live output whatever happened.
 */
export async function withReporters(
  reporters: readonly Reporter[],
  control: { signal?: AbortSignal; handleSignals: boolean },
  work: (ctx: CommandContext) => Promise<ExecuteOutcome[]>,
): Promise<ExecuteOutcome[]> {
  const ctx = commandContext(reporters, control);
  try {
    const outcomes = await work(ctx);
    await ctx.reporter.onEnd(outcomes);
    return outcomes;
  } finally {
    ctx.reporter.close();
  }
}
