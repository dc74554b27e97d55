import { readFile, writeFile } from 'node:fs/promises';
import { oracleProvider } from '../agents/static.js';
import { resolvePaths } from '../config/paths.js';
import { selectFixtures } from '../fixtures/select.js';
import type { CommandContext } from './context.js';
import type { SelfcheckOptions } from './options.js';
import { execute, type ExecuteOutcome } from './execute.js';

/** Every selected fixture RED → oracle → GREEN; `write` records the observed test lists in the manifests. */
export async function selfcheck(options: SelfcheckOptions, ctx: CommandContext): Promise<ExecuteOutcome> {
  const selection = await selectFixtures(resolvePaths(options), {
    patterns: options.ids,
    tags: options.tag,
    ...(options.shard ? { shard: options.shard } : {}),
  });
  const outcome = await execute({
    mode: 'selfcheck',
    selection,
    options,
    provider: oracleProvider,
    ctx,
    ...(options.resume ? { resume: { runId: options.resume, force: options.force } } : {}),
  });
  if (options.write) await writeObserved(outcome, (m) => ctx.reporter.onLog(m, 'info'));
  return outcome;
}

/** `--write`: each fixture that went RED → GREEN gets the test lists it showed. */
async function writeObserved(outcome: ExecuteOutcome, log: (m: string) => void): Promise<void> {
  const byId = new Map(outcome.fixtures.map((f) => [f.id, f]));
  for (const r of outcome.report.fixtures) {
    const fixture = byId.get(r.fixtureId);
    if (!fixture || !r.observed || !r.red || !r.green || r.red.state !== 'fail' || r.green.state !== 'pass') {
      if (fixture) log(`--write: ${r.fixtureId} left unchanged (${r.verdict}: ${r.reason})`);
      continue;
    }
    const json = JSON.parse(await readFile(fixture.manifestPath, 'utf8')) as Record<string, unknown>;
    json.tests = { failToPass: r.observed.failToPass, passToPass: r.observed.passToPass };
    await writeFile(fixture.manifestPath, `${JSON.stringify(json, null, 2)}\n`);
    log(`--write: ${r.fixtureId}: ${r.observed.failToPass.length} failToPass, ${r.observed.passToPass.length} passToPass`);
  }
}
