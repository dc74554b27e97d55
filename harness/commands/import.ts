import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { resolvePaths } from '../config/paths.js';
import { describeError, isRedgreenError, RedgreenError } from '../errors.js';
import { readSpecFile } from '../fixtures/repo-spec.js';
import { readInstances } from '../fixtures/swebench.js';
import { draftFromInstance } from '../fixtures/swebench-import.js';
import { writeFixture } from '../fixtures/write-fixture.js';
import { PathOptionsSchema } from './options.js';
import { writeSchema } from './validate.js';

export const ImportOptionsSchema = PathOptionsSchema.extend({
  repos: z.string().min(1).optional(),
  spec: z.string().min(1).optional(),
});
export type ImportOptions = z.infer<typeof ImportOptionsSchema>;

/**
 * `redgreen import swe-bench <file.jsonl|json> --repos <dir> [--spec <file>]`: each instance
 * becomes a fixture by reference. An instance that is broken (a missing field, an unknown commit,
 * a test patch that does not apply) is reported with where it is and skipped; the others are
 * imported, and the exit code is then 2.
 */
export async function importDataset(format: string, file: string, options: ImportOptions): Promise<number> {
  if (format !== 'swe-bench') throw new RedgreenError('USAGE', `unknown dataset format "${format}"`, 'redgreen imports swe-bench');
  const paths = resolvePaths({ ...options, root: options.root ?? '.' });
  const text = await readFile(file, 'utf8').catch(() => {
    throw new RedgreenError('USAGE', `cannot read ${file}`);
  });
  const spec = options.spec ? await readSpecFile(options.spec) : null;
  const reposDir = options.repos ? path.resolve(options.repos) : undefined;
  if (reposDir && !existsSync(reposDir)) throw new RedgreenError('USAGE', `--repos: no folder ${options.repos}`);
  const ctx = { cacheDir: paths.cacheDir, spec, root: paths.root, fixturesDir: paths.fixturesDir, ...(reposDir ? { reposDir } : {}) };
  const read = readInstances(text, path.basename(file));
  const imported: string[] = [];
  let problems = 0;
  const problem = (where: string, message: string) => {
    problems++;
    process.stderr.write(`✘ ${where}: ${message.replace(/\n/g, '\n    ')}\n`);
  };
  for (const r of read) {
    if (!r.instance) {
      problem(r.where, `instance_invalid: ${r.problem}`);
      continue;
    }
    const id = r.instance.instance_id;
    if (existsSync(path.join(paths.fixturesDir, id))) {
      problem(`${r.where} (${id})`, `usage: fixtures/${id} already exists (remove it to import it again)`);
      continue;
    }
    try {
      const { draft, how, mapped } = await draftFromInstance(r.instance, r.raw!, ctx);
      await writeFixture(draft, paths);
      imported.push(id);
      process.stderr.write(`✔ ${id}: ${draft.manifest.runner}, \`${draft.manifest.test.command}\` (${how})\n`);
      if (mapped.length) process.stderr.write(`    test ids in redgreen's form: ${mapped.join(', ')}\n`);
    } catch (e) {
      if (!isRedgreenError(e)) throw e;
      problem(`${r.where} (${id})`, `${e.code.toLowerCase()}: ${describeError(e)}`);
    }
  }
  if (imported.length && !existsSync(path.join(paths.root, 'fixture.schema.json'))) await writeSchema(paths.root);
  process.stdout.write(`${imported.length} instance(s) imported${problems ? `, ${problems} not (see above)` : ''}\n`);
  if (imported.length) process.stdout.write(`next: npx redgreen selfcheck ${imported.join(' ')}\n`);
  return problems ? 2 : 0;
}
