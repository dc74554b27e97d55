import path from 'node:path';
import { writeFile } from 'node:fs/promises';
import { resolvePaths } from '../config/paths.js';
import type { z } from 'zod';
import type { PathOptionsSchema } from './options.js';
import { lintFixture, type LintFinding } from '../pipeline/lint.js';
import { selectFixtures } from '../fixtures/select.js';
import { manifestJsonSchema } from '../fixtures/manifest.js';

/** Lints every manifest and oracle without running anything. Exit 2 when anything is wrong. */
export async function validate(ids: string[], options: z.infer<typeof PathOptionsSchema> & { json?: boolean }): Promise<number> {
  const paths = resolvePaths(options);
  const { fixtures, broken } = (await selectFixtures(paths, { patterns: ids, tags: [] })).discovery;
  const findings: Record<string, LintFinding[]> = {};
  for (const b of broken) findings[b.id] = [{ level: 'error', message: b.error.message }];
  for (const f of fixtures) findings[f.id] = await lintFixture(f);
  const ids_ = Object.keys(findings).sort();
  const errors = ids_.filter((id) => findings[id]!.some((x) => x.level === 'error'));
  if (options.json) {
    process.stdout.write(`${JSON.stringify({ fixtures: findings, errors: errors.length }, null, 2)}\n`);
  } else {
    for (const id of ids_) {
      const list = findings[id]!;
      const mark = list.some((x) => x.level === 'error') ? '✘' : '✔';
      process.stdout.write(`${mark} ${id}\n`);
      for (const x of list) process.stdout.write(`    ${x.level}: ${x.message.replace(/\n/g, '\n      ')}\n`);
    }
    process.stdout.write(`${ids_.length - errors.length}/${ids_.length} fixtures valid\n`);
  }
  return errors.length ? 2 : 0;
}

/** Writes fixture.schema.json (for editors) from the zod schema. */
export async function writeSchema(root: string): Promise<string> {
  const file = path.join(root, 'fixture.schema.json');
  await writeFile(file, `${JSON.stringify(manifestJsonSchema(), null, 2)}\n`);
  return file;
}
