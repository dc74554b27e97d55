import { z } from 'zod';
import { PathOptionsSchema } from './options.js';
import { resolvePaths } from '../config/paths.js';
import { compareReports, DEFAULT_NOISE, renderComparison, type Comparison } from '../reporters/compare.js';
import { loadReport } from './report.js';

/** A number option (commander gives strings): finite and at least `min`, or a usage error naming it. */
export const numberFromCli = (min: number, hint = '') =>
  z.union([z.number(), z.string()]).transform((v, ctx) => {
    const n = typeof v === 'number' ? v : v.trim() === '' ? NaN : Number(v);
    if (!Number.isFinite(n) || n < min) {
      ctx.addIssue({ code: 'custom', message: `must be a number ≥ ${min}${hint}, got ${JSON.stringify(v)}` });
      return z.NEVER;
    }
    return n;
  });

export const CompareOptionsSchema = PathOptionsSchema.extend({
  json: z.boolean().default(false),
  noiseMs: numberFromCli(0).default(DEFAULT_NOISE.ms),
  noiseRatio: numberFromCli(1).default(DEFAULT_NOISE.ratio),
});
export type CompareOptions = z.infer<typeof CompareOptionsSchema>;

/** The comparison of two runs' reports (the API's compare). */
export async function compareRuns(a: string, b: string, options: CompareOptions): Promise<Comparison> {
  const paths = resolvePaths(options);
  const [ra, rb] = [await loadReport(a, paths), await loadReport(b, paths)];
  return compareReports(ra.report, rb.report, { ms: options.noiseMs, ratio: options.noiseRatio });
}

/**
 * `redgreen compare <run-a> <run-b>`: exit 1 when a fixture that was valid/resolved in A is not in
 * B (a regression suite gates CI on it), 0 otherwise. Fixtures in only one run are listed, never
 * counted as regressions.
 */
export async function compare(a: string, b: string, options: CompareOptions): Promise<number> {
  const c = await compareRuns(a, b, options);
  process.stdout.write(options.json ? `${JSON.stringify(c, null, 2)}\n` : renderComparison(c));
  return c.regressions ? 1 : 0;
}
