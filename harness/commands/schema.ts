import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { reportJsonSchema } from '../reporters/report.js';

/** Writes report.schema.json (the JSON Schema of report.json, shipped with the package) from the zod schema. */
export async function writeReportSchema(root: string): Promise<string> {
  const file = path.join(root, 'report.schema.json');
  await writeFile(file, `${JSON.stringify(reportJsonSchema(), null, 2)}\n`);
  return file;
}
