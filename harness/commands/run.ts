import { z } from 'zod';
import { commandAgent } from '../agents/command.js';
import { loadPatches } from '../agents/patch-sources.js';
import { nopProvider, oracleProvider } from '../agents/static.js';
import { RunOptionsSchema } from './options.js';
import { resolvePaths } from '../config/paths.js';
import { RedgreenError } from '../errors.js';
import { discoverFixtures } from '../fixtures/load.js';
import type { PatchProvider } from '../pipeline/provider.js';
import { loadResumePoint } from '../transcripts/resume.js';
import { execute, printOutcomes, worstExitCode, type ExecuteOutcome } from './execute.js';

export const AgentRunOptionsSchema = RunOptionsSchema.extend({
  patches: z.string().min(1).optional(),
  agent: z.string().min(1).optional(),
  agentTimeout: z.coerce.number().positive().max(86_400).default(1800),
  agentNetwork: z.boolean().default(false),
  baseline: z.boolean().default(true),
  /** Reject (never apply) a patch the audit flags, instead of grading it and marking a pass suspicious. */
  strict: z.boolean().default(false),
});
export type AgentRunOptions = z.infer<typeof AgentRunOptionsSchema>;

/**
 * Grades patches (predictions, a patch folder) or an agent (a command, `nop`, `oracle`) over the
 * fixtures. Several models in one predictions file are graded as separate runs.
 */
export async function run(ids: string[], options: AgentRunOptions): Promise<number> {
  if (Boolean(options.patches) === Boolean(options.agent)) {
    throw new RedgreenError('USAGE', 'give exactly one of --patches <file|dir> or --agent <command|nop|oracle>');
  }
  const discovery = await discoverFixtures(resolvePaths(options), ids);
  const known = new Set(discovery.fixtures.map((f) => f.id));
  let providers: PatchProvider[];
  if (options.patches) {
    const loaded = await loadPatches(options.patches, known);
    for (const p of loaded.problems) process.stderr.write(`warning: ${p.where}: ${p.message} — skipped\n`);
    providers = loaded.providers;
    if (!providers.length) throw new RedgreenError('USAGE', `${options.patches}: no usable patch`, 'see the warnings above');
  } else if (options.agent === 'nop') providers = [nopProvider];
  else if (options.agent === 'oracle') providers = [oracleProvider];
  else providers = [commandAgent(options.agent!, { timeoutSec: options.agentTimeout, network: options.agentNetwork })];

  const resume = options.resume ? { runId: options.resume, force: options.force } : undefined;
  if (resume && providers.length > 1) {
    // One run id per model: resume the one whose subject the run recorded.
    const subject = (await loadResumePoint(resolvePaths(options).transcriptsDir, resume.runId)).state.options.subject;
    providers = providers.filter((p) => p.subject === subject);
  }
  const selected = [...discovery.broken, ...discovery.fixtures].map((f) => f.id);
  const outcomes: ExecuteOutcome[] = [];
  for (const provider of providers) {
    const label = providers.length > 1 ? provider.subject : undefined;
    // A patch source grades only what it submitted; the rest is listed, never run as a failure.
    const covers = provider.covers;
    const submitted = covers ? selected.filter((id) => covers.has(id)) : ids;
    const notSubmitted = covers ? selected.filter((id) => !covers.has(id)) : [];
    if (covers && !submitted.length) {
      process.stderr.write(`warning: ${provider.subject} has no patch for any selected fixture: nothing to run\n`);
      continue;
    }
    const outcome = await execute({
      mode: 'run',
      ids: submitted,
      notSubmitted,
      options,
      provider,
      baseline: options.baseline,
      strict: options.strict,
      discovery,
      label,
      ...(resume ? { resume } : {}),
    });
    outcomes.push(outcome);
    if (outcome.report.interrupted) break;
  }
  printOutcomes(outcomes, options.json);
  return worstExitCode(outcomes.map((o) => o.exitCode));
}
