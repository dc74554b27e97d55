import { readdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { harnessRun } from './measured.js';
import { makeTrivialFixtures } from './trivial.js';

/** RED runs and setup commands recorded in every transcript of a folder of runs. */
async function countPhases(transcripts: string): Promise<{ red: number; setup: number }> {
  const n = { red: 0, setup: 0 };
  for (const run of await readdir(transcripts)) {
    for (const file of (await readdir(path.join(transcripts, run))).filter((f) => f.endsWith('.jsonl'))) {
      for (const line of (await readFile(path.join(transcripts, run, file), 'utf8')).split('\n')) {
        if (!line) continue;
        const e = JSON.parse(line) as { type: string; phase?: string };
        if (e.type === 'tests' && e.phase === 'red') n.red++;
        if (e.type === 'command' && e.phase === 'setup') n.setup++;
      }
    }
  }
  return n;
}

/**
 * K models over N fixtures with a setup (one predictions file): setup and the RED baseline should
 * run once per fixture, not K times. Shown against the same K models graded by K separate commands.
 */
export async function benchModels(k: number, n: number): Promise<void> {
  const set = await makeTrivialFixtures(n);
  try {
    // A setup (a dependency the check reads), so that running it once or K times shows.
    for (const id of set.ids) {
      const file = path.join(set.root, 'fixtures', id, 'fixture.json');
      const m = JSON.parse(await readFile(file, 'utf8')) as Record<string, unknown>;
      m.setup = { commands: ['sleep 0.2 && echo 5 > dep'], timeoutSec: 60 };
      // What `selfcheck --write` records for the exit-code runner: run mode grades only declared tests.
      m.tests = { failToPass: ['exit-code'], passToPass: [] };
      await writeFile(file, JSON.stringify(m));
      await writeFile(path.join(set.root, 'fixtures', id, 'check.sh'), 'test "$(sh add.sh 2 3)" = "$(cat dep)"\n');
    }
    const oracle = await readFile(path.join(set.root, 'oracles', `${set.ids[0]}.patch`), 'utf8');
    const models = Array.from({ length: k }, (_, i) => `model-${i}`);
    const preds = (ms: string[]) =>
      ms.flatMap((m) => set.ids.map((id) => JSON.stringify({ instance_id: id, model_name_or_path: m, model_patch: oracle }))).join('\n');
    await writeFile(path.join(set.root, 'all.jsonl'), preds(models));
    for (const m of models) await writeFile(path.join(set.root, `${m}.jsonl`), preds([m]));
    const env = { XDG_CACHE_HOME: path.join(set.root, 'cache') };
    const where = (d: string) => ['--reports', path.join(set.root, d), '--transcripts', path.join(set.root, d)];

    const one = await harnessRun(set.root, ['run', '-j', '2', '--patches', 'all.jsonl', ...where('one')], env);
    const counted = await countPhases(path.join(set.root, 'one'));
    await rm(env.XDG_CACHE_HOME, { recursive: true, force: true });
    let separateMs = 0;
    for (const m of models)
      separateMs += (await harnessRun(set.root, ['run', '-j', '2', '--patches', `${m}.jsonl`, ...where('apart')], env)).wallMs;
    const apart = await countPhases(path.join(set.root, 'apart'));
    console.log(`\n${k} models × ${n} fixtures with setup, one predictions file (target: setup and RED once per fixture)`);
    console.log(
      `  one command:  ${(one.wallMs / 1000).toFixed(2)} s   RED runs ${counted.red} (${(counted.red / n).toFixed(1)} per fixture)   setup commands run ${counted.setup}`,
    );
    console.log(
      `  ${k} commands:   ${(separateMs / 1000).toFixed(2)} s   RED runs ${apart.red} (${(apart.red / n).toFixed(1)} per fixture)   setup commands run ${apart.setup} (the setup cache spares the rest)`,
    );
  } finally {
    await rm(set.root, { recursive: true, force: true });
  }
}
