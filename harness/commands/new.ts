import { existsSync } from 'node:fs';
import path from 'node:path';
import { writeSchema } from './validate.js';
import { PathOptionsSchema } from './options.js';
import { resolvePaths, shownPath } from '../config/paths.js';
import { RedgreenError } from '../errors.js';
import { ScaffoldRunnerSchema } from '../fixtures/manifest.js';
import { scaffoldFixture } from '../fixtures/scaffold.js';
import { templateFor } from '../results/index.js';
import { z } from 'zod';

export const NewOptionsSchema = PathOptionsSchema.extend({ runner: ScaffoldRunnerSchema.default('pytest') });

export async function newFixture(id: string, options: z.infer<typeof NewOptionsSchema>): Promise<number> {
  if (
    !z
      .string()
      .regex(/^[A-Za-z0-9][A-Za-z0-9_.-]*$/)
      .safeParse(id).success
  ) {
    throw new RedgreenError('USAGE', `invalid fixture id "${id}"`, 'use letters, digits, "_", "." and "-"');
  }
  const paths = resolvePaths({ ...options, root: options.root ?? '.' });
  // ScaffoldRunnerSchema let through only runners that have a template.
  const template = templateFor(options.runner)!;
  const [dir, oracle] = await scaffoldFixture({ id, template, fixturesDir: paths.fixturesDir, oraclesDir: paths.oraclesDir });
  // The manifest's "$schema" points at the project's copy, so editors can check it.
  if (!existsSync(path.join(paths.root, 'fixture.schema.json'))) await writeSchema(paths.root);
  process.stdout.write(
    `created ${shownPath(dir!)}/ and ${shownPath(oracle!)}\n` +
      `next: edit the bug, its tests and ISSUE.md; regenerate the oracle with git diff; then\n` +
      `  npx redgreen selfcheck ${id} --write   # check RED → GREEN and record the test lists\n`,
  );
  return 0;
}
