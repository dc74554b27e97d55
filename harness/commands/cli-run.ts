import type { Command } from 'commander';
import { shellQuote } from '../agents/command.js';
import type { Report } from '../reporters/report.js';
import { worstExitCode, type ExecuteOutcome } from './execute.js';
import { withReporters } from './invoke.js';
import { agentRunOptionsSchema, selfcheckOptionsSchema } from './options.js';
import { makeReporters } from './reporters.js';
import { resolveOptions, typedOptions } from './resolve-options.js';
import { run } from './run.js';
import { selfcheck } from './selfcheck.js';

/** After Ctrl-C or --bail: the command that finishes this run (the same command line, with --resume). */
function resumeHint(report: Report): string {
  const args: string[] = [];
  const argv = process.argv.slice(2);
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--resume') i++;
    else if (!argv[i]!.startsWith('--resume=')) args.push(argv[i]!);
  }
  const quote = (a: string) => (/^[\w@%+=:,./-]+$/.test(a) ? a : shellQuote(a));
  const left = report.unfinished.length;
  const why = report.bailed
    ? `stopped after ${report.bailed} fixture(s) missed (--bail): ${left} fixture(s) not run`
    : `interrupted: ${left} fixture(s) unfinished`;
  return `${why}; to finish the run:\n  redgreen ${[...args, '--resume', report.runId].map(quote).join(' ')}\n`;
}

/** The exit code of a command's runs, and after Ctrl-C or --bail the command that finishes the run. */
function finish(outcomes: readonly ExecuteOutcome[]): number {
  const stopped = outcomes.find((o) => o.report.interrupted || o.report.bailed);
  if (stopped) process.stderr.write(resumeHint(stopped.report));
  return worstExitCode(outcomes.map((o) => o.exitCode));
}

export async function selfcheckCli(ids: string[], cmd: Command): Promise<number> {
  const options = await resolveOptions(selfcheckOptionsSchema, { ...typedOptions(cmd), ids }, 'cli');
  const reporters = makeReporters(options.reporter, { cli: true, json: options.json });
  return finish(await withReporters(reporters, { handleSignals: true }, async (ctx) => [await selfcheck(options, ctx)]));
}

export async function runCli(ids: string[], cmd: Command): Promise<number> {
  const options = await resolveOptions(agentRunOptionsSchema, { ...typedOptions(cmd), ids }, 'cli');
  const reporters = makeReporters(options.reporter, { cli: true, json: options.json });
  return finish(await withReporters(reporters, { handleSignals: true }, (ctx) => run(options, ctx)));
}
