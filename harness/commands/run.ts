import { commandAgent } from '../agents/command.js';
import { loadPatches } from '../agents/patch-sources.js';
import { nopProvider, oracleProvider } from '../agents/static.js';
import { resolvePaths } from '../config/paths.js';
import { RedgreenError } from '../errors.js';
import { selectFixtures } from '../fixtures/select.js';
import { SharedBaselines } from '../pipeline/baseline-phase.js';
import type { PatchProvider } from '../pipeline/provider.js';
import { loadResumePoint } from '../transcripts/resume.js';
import type { CommandContext } from './context.js';
import { execute, type ExecuteOutcome } from './execute.js';
import type { AgentRunOptions } from './options.js';

/**
 * Grades patches (predictions, a patch folder) or an agent (a command, `nop`, `oracle`) over the
 * selected fixtures. Several models in one predictions file are graded as separate runs.
 */
export async function run(options: AgentRunOptions, ctx: CommandContext): Promise<ExecuteOutcome[]> {
  if (Boolean(options.patches) === Boolean(options.agent)) {
    throw new RedgreenError('USAGE', 'give exactly one of --patches <file|dir> or --agent <command|nop|oracle>');
  }
  const paths = resolvePaths(options);
  const selection = await selectFixtures(paths, {
    patterns: options.ids,
    tags: options.tag,
    ...(options.shard ? { shard: options.shard } : {}),
  });
  const known = new Set(selection.discovery.fixtures.map((f) => f.id));
  let providers: PatchProvider[];
  if (options.patches) {
    const loaded = await loadPatches(options.patches, known);
    for (const p of loaded.problems) ctx.reporter.onLog(`${p.where}: ${p.message} — skipped`, 'warning');
    providers = loaded.providers;
    if (!providers.length) throw new RedgreenError('USAGE', `${options.patches}: no usable patch`, 'see the warnings above');
  } else if (options.agent === 'nop') providers = [nopProvider];
  else if (options.agent === 'oracle') providers = [oracleProvider];
  else providers = [commandAgent(options.agent!, { timeoutSec: options.agentTimeout, network: options.agentNetwork })];

  const resume = options.resume ? { runId: options.resume, force: options.force } : undefined;
  if (resume && providers.length > 1) {
    // One run id per model: resume the one whose subject the run recorded.
    const subject = (await loadResumePoint(paths.transcriptsDir, resume.runId)).state.options.subject;
    providers = providers.filter((p) => p.subject === subject);
  }
  const outcomes: ExecuteOutcome[] = [];
  // Several models over the same fixtures: each fixture's setup and RED baseline run once, for all.
  const baselines = providers.length > 1 && options.baseline !== false ? new SharedBaselines() : undefined;
  for (const provider of providers) {
    const label = providers.length > 1 ? provider.subject : undefined;
    // A patch source grades only what it submitted; the rest is listed, never run as a failure.
    const covers = provider.covers;
    const submitted = covers ? selection.ids.filter((id) => covers.has(id)) : selection.ids;
    const notSubmitted = covers ? selection.ids.filter((id) => !covers.has(id)) : [];
    if (covers && !submitted.length) {
      ctx.reporter.onLog(`${provider.subject} has no patch for any selected fixture: nothing to run`, 'warning');
      continue;
    }
    const keep = (id: string) => submitted.includes(id);
    const outcome = await execute({
      mode: 'run',
      selection: {
        ...selection,
        ids: submitted,
        explicit: selection.explicit || Boolean(covers),
        discovery: {
          fixtures: selection.discovery.fixtures.filter((f) => keep(f.id)),
          broken: selection.discovery.broken.filter((b) => keep(b.id)),
        },
      },
      notSubmitted,
      options,
      provider,
      ctx,
      baseline: options.baseline,
      strict: options.strict,
      ...(label ? { label } : {}),
      ...(resume ? { resume } : {}),
      ...(baselines ? { baselines } : {}),
    });
    outcomes.push(outcome);
    if (outcome.report.interrupted) break;
  }
  return outcomes;
}
