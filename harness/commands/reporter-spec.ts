import path from 'node:path';
import { z } from 'zod';
import type { Reporter } from '../reporters/reporter.js';

/** The reporters redgreen has; a file format may name its file (`junit=out/junit.xml`). */
export const REPORTER_NAMES = ['default', 'json', 'junit', 'md', 'html', 'github'] as const;
export type ReporterName = (typeof REPORTER_NAMES)[number];
export const FILE_REPORTERS = ['junit', 'md', 'html'] as const satisfies readonly ReporterName[];

export type ReporterSpec = { name: ReporterName; file?: string } | Reporter;

/** `name` or `name=file`, split. */
const nameAndFile = (v: string): [string, string | undefined] => {
  const [name = '', file] = v.split(/=(.*)/s, 2).map((x) => x.trim());
  return [name, file];
};

/** A name, `name=file`, or (API and JS configs) a reporter object with lifecycle hooks. */
export const ReporterSpecSchema = z.custom<string | Reporter>().transform((v, ctx): ReporterSpec => {
  if (typeof v === 'object' && v !== null && !Array.isArray(v)) return v;
  const problem = (message: string) => {
    ctx.addIssue({ code: 'custom', message });
    return z.NEVER;
  };
  if (typeof v !== 'string') return problem(`a reporter is a name (${REPORTER_NAMES.join(', ')}) or an object with reporter hooks`);
  const [name, file] = nameAndFile(v);
  if (!(REPORTER_NAMES as readonly string[]).includes(name))
    return problem(`unknown reporter ${JSON.stringify(name)}: one of ${REPORTER_NAMES.join(', ')}`);
  if (file !== undefined && !(FILE_REPORTERS as readonly string[]).includes(name))
    return problem(`only ${FILE_REPORTERS.join(', ')} write a file (${name}=… is not one)`);
  if (file === '') return problem(`${name}= needs a file name`);
  return { name: name as ReporterName, ...(file ? { file } : {}) };
});

/** `--reporter a,b --reporter c` from commander: one list. */
export const splitReporterFlags = (values: readonly string[]): string[] =>
  values.flatMap((v) => v.split(',').map((x) => x.trim())).filter(Boolean);

/** A config's reporters with their files (`junit=out/junit.xml`) taken from the config's folder, as its other paths are. */
export function reportersFrom(dir: string, value: unknown): unknown {
  if (!Array.isArray(value)) return value;
  return value.map((v) => {
    if (typeof v !== 'string') return v;
    const [name, file] = nameAndFile(v);
    return file ? `${name}=${path.resolve(dir, file)}` : v;
  });
}
