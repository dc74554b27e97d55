import { existsSync } from 'node:fs';
import { cp, mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { PACKAGE_ROOT, shownPath } from '../config/paths.js';
import { scaffoldFixture } from '../fixtures/scaffold.js';
import { writeSchema } from './validate.js';

export const InitOptionsSchema = z.object({ root: z.string().optional() });
export type InitOptions = z.infer<typeof InitOptionsSchema>;

/** A bundled fixture that needs nothing but Node (which runs redgreen itself), so a new project's first selfcheck passes anywhere. */
const STARTER = 'js_cart_total';
/** A `redgreen new` fixture beside it, for the user to turn into their own. */
const SCAFFOLDED = 'my_first_bug';

/** The tests of the node-test template `new` writes, as `selfcheck --write` records them: graded runs need them declared. */
const SCAFFOLDED_TESTS = {
  failToPass: ['test/calc.test.js::add > adds two numbers'],
  passToPass: ['test/calc.test.js::add > adding zero keeps the number'],
};

const CONFIG = { backend: 'local', agentTimeout: 600 };

/**
 * `redgreen init`: a project to start from, in the current folder. fixtures/ and oracles/ with a
 * bundled fixture and a scaffolded one; examples/predictions.jsonl (one patch that fixes, one
 * that does not) and examples/agent.mjs (a stand-in agent), so every README example runs here as
 * written; redgreen.config.json; fixture.schema.json. An existing file is never overwritten.
 */
export async function init(options: InitOptions): Promise<number> {
  const root = path.resolve(options.root ?? '.');
  const fixturesDir = path.join(root, 'fixtures');
  const oraclesDir = path.join(root, 'oracles');
  const made: string[] = [];
  const kept: string[] = [];
  const fresh = (p: string) => {
    if (existsSync(p)) {
      kept.push(shownPath(p));
      return false;
    }
    made.push(shownPath(p));
    return true;
  };

  await mkdir(oraclesDir, { recursive: true });
  if (fresh(path.join(fixturesDir, STARTER)))
    await cp(path.join(PACKAGE_ROOT, 'fixtures', STARTER), path.join(fixturesDir, STARTER), { recursive: true });
  if (fresh(path.join(oraclesDir, `${STARTER}.patch`)))
    await cp(path.join(PACKAGE_ROOT, 'oracles', `${STARTER}.patch`), path.join(oraclesDir, `${STARTER}.patch`));
  if (fresh(path.join(fixturesDir, SCAFFOLDED))) {
    await scaffoldFixture({ id: SCAFFOLDED, runner: 'node-test', fixturesDir, oraclesDir });
    const manifest = path.join(fixturesDir, SCAFFOLDED, 'fixture.json');
    await writeFile(manifest, `${JSON.stringify({ ...JSON.parse(await readFile(manifest, 'utf8')), tests: SCAFFOLDED_TESTS }, null, 2)}\n`);
    made.push(shownPath(path.join(oraclesDir, `${SCAFFOLDED}.patch`)));
  }
  const examples = path.join(root, 'examples');
  await mkdir(examples, { recursive: true });
  const predictions = path.join(examples, 'predictions.jsonl');
  if (fresh(predictions)) {
    const patch = await readFile(path.join(oraclesDir, `${STARTER}.patch`), 'utf8');
    const lines = [
      { instance_id: STARTER, model_name_or_path: 'example-model', model_patch: patch },
      { instance_id: SCAFFOLDED, model_name_or_path: 'example-model', model_patch: '' },
    ];
    await writeFile(predictions, `${lines.map((l) => JSON.stringify(l)).join('\n')}\n`);
  }
  const agent = path.join(examples, 'agent.mjs');
  if (fresh(agent)) await cp(path.join(PACKAGE_ROOT, 'examples', 'agent.mjs'), agent);
  const config = path.join(root, 'redgreen.config.json');
  if (fresh(config)) await writeFile(config, `${JSON.stringify(CONFIG, null, 2)}\n`);
  if (fresh(path.join(root, 'fixture.schema.json'))) await writeSchema(root);

  const out = [
    ...made.map((m) => `created ${m}`),
    ...kept.map((k) => `kept ${k} (already there)`),
    'next:',
    '  npx redgreen selfcheck                                   # every fixture RED → oracle → GREEN',
    '  npx redgreen run --patches examples/predictions.jsonl    # grade predictions (SWE-bench format)',
    '  npx redgreen run --agent "node $PWD/examples/agent.mjs"  # grade an agent command',
    '  npx redgreen new <id> --runner pytest                    # a fixture of your own (also node-test, vitest, go, cargo …)',
  ];
  process.stdout.write(`${out.join('\n')}\n`);
  return 0;
}
