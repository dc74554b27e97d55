import { z } from 'zod';
import type { Reporter } from '../reporters/reporter.js';

/** The reporters redgreen has; a file format may name its file (`junit=out/junit.xml`). */
export const REPORTER_NAMES = ['default', 'json', 'junit', 'md', 'html', 'github'] as const;
export type ReporterName = (typeof REPORTER_NAMES)[number];
export const FILE_REPORTERS = ['junit', 'md', 'html'] as const satisfies readonly ReporterName[];

export type ReporterSpec = { name: ReporterName; file?: string } | Reporter;

const named = z.string().transform((s, ctx) => {
  const [name = '', file] = s.split(/=(.*)/s, 2).map((x) => x.trim());
  if (!(REPORTER_NAMES as readonly string[]).includes(name)) {
    ctx.addIssue({ code: 'custom', message: `unknown reporter ${JSON.stringify(name)}: one of ${REPORTER_NAMES.join(', ')}` });
    return z.NEVER;
  }
  if (file !== undefined && !(FILE_REPORTERS as readonly string[]).includes(name)) {
    ctx.addIssue({ code: 'custom', message: `only ${FILE_REPORTERS.join(', ')} write a file (${name}=… is not one)` });
    return z.NEVER;
  }
  if (file === '') {
    ctx.addIssue({ code: 'custom', message: `${name}= needs a file name` });
    return z.NEVER;
  }
  return { name: name as ReporterName, ...(file ? { file } : {}) };
});

/** A name, `name=file`, or (API and JS configs) a reporter object with lifecycle hooks. */
export const ReporterSpecSchema = z.union([named, z.custom<Reporter>((v) => typeof v === 'object' && v !== null && !Array.isArray(v))]);

/** `--reporter a,b --reporter c` from commander: one list. */
export const splitReporterFlags = (values: readonly string[]): string[] =>
  values.flatMap((v) => v.split(',').map((x) => x.trim())).filter(Boolean);
