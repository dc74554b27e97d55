import { readFile, writeFile } from 'node:fs/promises';
import { oracleProvider } from '../agents/static.js';
import type { SelfcheckOptions } from './options.js';
import { execute, printOutcomes } from './execute.js';

/** Every fixture RED → oracle → GREEN; `--write` records the observed test lists in the manifests. */
export async function selfcheck(ids: string[], options: SelfcheckOptions): Promise<number> {
  const outcome = await execute({
    mode: 'selfcheck',
    ids,
    options,
    provider: oracleProvider,
    ...(options.resume ? { resume: { runId: options.resume, force: options.force } } : {}),
  });
  printOutcomes([outcome], options.json);
  if (options.write) {
    const byId = new Map(outcome.fixtures.map((f) => [f.id, f]));
    for (const r of outcome.report.fixtures) {
      const fixture = byId.get(r.fixtureId);
      if (!fixture || !r.observed || !r.red || !r.green || r.red.state !== 'fail' || r.green.state !== 'pass') {
        if (fixture) process.stderr.write(`--write: ${r.fixtureId} left unchanged (${r.verdict}: ${r.reason})\n`);
        continue;
      }
      const json = JSON.parse(await readFile(fixture.manifestPath, 'utf8')) as Record<string, unknown>;
      json.tests = { failToPass: r.observed.failToPass, passToPass: r.observed.passToPass };
      await writeFile(fixture.manifestPath, `${JSON.stringify(json, null, 2)}\n`);
      process.stderr.write(
        `--write: ${r.fixtureId}: ${r.observed.failToPass.length} failToPass, ${r.observed.passToPass.length} passToPass\n`,
      );
    }
  }
  return outcome.exitCode;
}
