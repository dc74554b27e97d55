import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { manifestJsonSchema } from '../../harness/fixtures/manifest.js';
import { reportJsonSchema } from '../../harness/reporters/report.js';
import { REPO } from '../helpers/cli.js';

/** The JSON Schemas the package ships are generated (`redgreen schema [--report]`): they must not drift from the zod schemas. */
describe('shipped JSON Schemas', () => {
  test('fixture.schema.json and report.schema.json are what the zod schemas generate', () => {
    const read = (f: string) => JSON.parse(readFileSync(path.join(REPO, f), 'utf8')) as unknown;
    expect(read('fixture.schema.json')).toEqual(manifestJsonSchema());
    expect(read('report.schema.json')).toEqual(reportJsonSchema());
  });
});
