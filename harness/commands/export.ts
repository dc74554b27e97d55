import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { resolvePaths, shownPath } from '../config/paths.js';
import { describeError, isRedgreenError, RedgreenError } from '../errors.js';
import { writeHarborTask } from '../fixtures/harbor-export.js';
import { selectFixtures } from '../fixtures/select.js';
import { instanceOf } from '../fixtures/swebench-export.js';
import { SpecExport } from '../fixtures/swebench-spec-export.js';
import { protectedGlobs } from '../pipeline/patch-phase.js';
import { PathOptionsSchema } from './options.js';

export const ExportOptionsSchema = PathOptionsSchema.extend({
  out: z.string().min(1).optional(),
  repos: z.string().min(1).optional(),
  spec: z.string().min(1).optional(),
});
export type ExportOptions = z.infer<typeof ExportOptionsSchema>;

/**
 * `redgreen export swe-bench [ids…] [--out file.jsonl] [--repos dir]`: one instance per line
 * (stdout without --out); `redgreen export harbor [ids…] --out dir`: one task folder each. The
 * fixtures are selected as every command selects them (ids, globs, folders). A fixture that
 * cannot be exported is reported and the others go on (exit 2 then).
 */
export async function exportFixtures(format: string, ids: string[], options: ExportOptions): Promise<number> {
  if (format !== 'swe-bench' && format !== 'harbor')
    throw new RedgreenError('USAGE', `unknown format "${format}"`, 'export swe-bench or harbor');
  if (format === 'harbor' && !options.out) throw new RedgreenError('USAGE', 'export harbor needs --out <dir>: the folder the tasks go in');
  const paths = resolvePaths(options);
  const { fixtures, broken } = (await selectFixtures(paths, { patterns: ids, tags: [] })).discovery;
  let problems = 0;
  const problem = (id: string, message: string) => {
    problems++;
    process.stderr.write(`✘ ${id}: ${message.replace(/\n/g, '\n    ')}\n`);
  };
  for (const b of broken) problem(b.id, b.error.message);
  const lines: string[] = [];
  const specs = new SpecExport();
  for (const f of fixtures) {
    try {
      if (format === 'swe-bench') {
        const instance = await instanceOf(f, {
          cacheDir: paths.cacheDir,
          ...(options.repos ? { reposDir: path.resolve(options.repos) } : {}),
        });
        specs.add(f, { repo: String(instance.repo), version: String(instance.version) });
        lines.push(JSON.stringify(instance));
      } else process.stderr.write(`✔ ${f.id} → ${shownPath(await writeHarborTask(f, path.resolve(options.out!), protectedGlobs(f)))}\n`);
    } catch (e) {
      if (!isRedgreenError(e)) throw e;
      problem(f.id, describeError(e));
    }
  }
  if (format === 'swe-bench') {
    const text = lines.length ? `${lines.join('\n')}\n` : '';
    if (options.out && options.out !== '-') {
      await writeFile(options.out, text);
      process.stderr.write(`${lines.length} instance(s) written to ${options.out}\n`);
    } else process.stdout.write(text);
    if (options.spec) {
      for (const id of specs.conflicts)
        problem(
          id,
          'runs otherwise than another fixture of its repository and version: the spec file cannot say both (import it with a spec of its own)',
        );
      await writeFile(options.spec, `${JSON.stringify(specs.file, null, 2)}\n`);
      process.stderr.write(`the spec to import them back with: ${options.spec} (--spec ${options.spec})\n`);
    }
  }
  return problems ? 2 : 0;
}
