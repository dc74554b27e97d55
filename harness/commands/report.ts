import { mkdir, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { PathOptionsSchema } from './options.js';
import { resolvePaths } from '../config/paths.js';
import { resolveRunRef } from '../config/run-ref.js';
import { describeError, jsonProblem, RedgreenError } from '../errors.js';
import { renderHtml, type HtmlRun } from '../reporters/html.js';
import { loadExtras, type ExtrasCollector } from '../reporters/html-transcript.js';
import { renderJunit } from '../reporters/junit-xml.js';
import { renderMarkdown } from '../reporters/markdown.js';
import { REPORT_SCHEMA, ReportSchema, type Report } from '../reporters/report.js';
import { writeAtomic } from '../transcripts/writer.js';
import { writeOutput } from './output-file.js';

export const FORMATS = { html: 'report.html', junit: 'junit.xml', md: 'summary.md' } as const;
export type Format = keyof typeof FORMATS;

export const ReportOptionsSchema = PathOptionsSchema.extend({
  format: z
    .string()
    .default('html,junit,md')
    .transform((s) => [
      ...new Set(
        s
          .split(',')
          .map((x) => x.trim())
          .filter(Boolean),
      ),
    ])
    .pipe(z.array(z.enum(['html', 'junit', 'md'], { message: 'formats are html, junit and md (comma-separated)' })).min(1)),
  out: z.string().min(1).optional(),
});
export type ReportOptions = z.infer<typeof ReportOptionsSchema>;

export interface LoadedReport {
  report: Report;
  file: string;
  /** Where the run's transcript should be (it may not exist). */
  transcriptDir: string;
  /** The HTML page's extras taken from the run's events as it ran (its transcript is then not read again). */
  collected?: ExtrasCollector;
}

/** A run id (in the reports folder), a run's report folder, a report.json, or a transcript folder. */
export async function loadReport(given: string, dirs: { reportsDir: string; transcriptsDir: string }): Promise<LoadedReport> {
  const ref = await resolveRunRef(given, dirs.reportsDir);
  const st = await stat(ref).catch(() => null);
  let file = path.join(dirs.reportsDir, ref, 'report.json');
  let transcriptDir: string | null = null;
  if (st?.isFile()) file = ref;
  else if (st?.isDirectory()) {
    const inside = path.join(ref, 'report.json');
    if (await stat(inside).catch(() => null)) file = inside;
    else if (await stat(path.join(ref, 'run.json')).catch(() => null)) {
      transcriptDir = path.resolve(ref);
      file = path.join(dirs.reportsDir, path.basename(path.resolve(ref)), 'report.json');
    }
  }
  const text = await readFile(file, 'utf8').catch(() => null);
  if (text === null)
    throw new RedgreenError(
      'REPORT_NOT_FOUND',
      `no report at ${file}`,
      `pass a run id of ${dirs.reportsDir}, a report folder or a report.json`,
    );
  let json: { schema?: unknown };
  try {
    json = JSON.parse(text) as { schema?: unknown };
  } catch (e) {
    throw new RedgreenError('REPORT_INVALID', `${file}: not valid JSON (${jsonProblem(text, e)})`);
  }
  if (json?.schema !== REPORT_SCHEMA) {
    throw new RedgreenError(
      'REPORT_INVALID',
      `${file}: schema ${JSON.stringify(json?.schema ?? null)} is not ${REPORT_SCHEMA}, the report version this redgreen reads`,
    );
  }
  const parsed = ReportSchema.safeParse(json);
  if (!parsed.success) {
    const issues = parsed.error.issues.slice(0, 5).map((i) => `field "${i.path.map(String).join('.')}": ${i.message}`);
    throw new RedgreenError('REPORT_INVALID', `${file}: not a valid ${REPORT_SCHEMA} report\n  ${issues.join('\n  ')}`);
  }
  const report = parsed.data;
  if (!transcriptDir) {
    // Next to the report's own reports/ folder first (a copied run), then the configured folder.
    const sibling = path.resolve(path.dirname(file), '..', '..', 'transcripts', report.runId);
    transcriptDir = (await stat(sibling).catch(() => null)) ? sibling : path.join(dirs.transcriptsDir, report.runId);
  }
  return { report, file, transcriptDir };
}

/** Renders the formats for one or several runs (several: a matrix of fixtures × runs). */
export async function renderFormats(
  loaded: readonly LoadedReport[],
  formats: readonly Format[],
  warn: (m: string) => void,
): Promise<Map<Format, string>> {
  const out = new Map<Format, string>();
  const reports = loaded.map((l) => l.report);
  if (formats.includes('html')) {
    const total = reports.reduce((a, r) => a + r.fixtures.length, 0);
    const runs: HtmlRun[] = [];
    for (const l of loaded) {
      // Collected for another total (a page of several runs, an interrupted run), their clipping differs: read again.
      const known = l.collected?.totalFixtures === total ? l.collected.extras : undefined;
      const { extras, warning } = await loadExtras(l.report, l.transcriptDir, total, known);
      if (warning) warn(warning);
      runs.push({ report: l.report, ...(extras ? { extras } : {}) });
    }
    out.set('html', renderHtml(runs));
  }
  if (formats.includes('junit')) out.set('junit', renderJunit(reports));
  if (formats.includes('md')) out.set('md', renderMarkdown(reports));
  return out;
}

/** Where each format goes: a file named by --out, a folder named by --out, or the report's own folder. */
function targets(formats: readonly Format[], out: string | undefined, loaded: readonly LoadedReport[]): Map<Format, string> {
  const ext: Record<Format, string> = { html: '.html', junit: '.xml', md: '.md' };
  if (out && formats.length === 1 && (out === '-' || out.endsWith(ext[formats[0]!]))) return new Map([[formats[0]!, out]]);
  if (out === '-') throw new RedgreenError('USAGE', '--out - (stdout) takes exactly one --format');
  if (!out && loaded.length > 1)
    throw new RedgreenError('USAGE', 'several reports make one combined report: say where it goes with --out <file|dir>');
  const dir = out ?? path.dirname(loaded[0]!.file);
  return new Map(formats.map((f) => [f, path.join(dir, FORMATS[f])]));
}

/** `redgreen report <run...> --format html,junit,md [--out file|dir|-]` */
export async function report(refs: string[], options: ReportOptions): Promise<number> {
  const paths = resolvePaths(options);
  const loaded: LoadedReport[] = [];
  for (const ref of refs) loaded.push(await loadReport(ref, paths));
  const where = targets(options.format, options.out, loaded);
  const rendered = await renderFormats(loaded, options.format, (m) => process.stderr.write(`warning: ${m}\n`));
  for (const [format, file] of where) {
    const text = rendered.get(format)!;
    if (file === '-') {
      process.stdout.write(text);
      continue;
    }
    await mkdir(path.dirname(path.resolve(file)), { recursive: true });
    await writeOutput(file, text);
    process.stdout.write(`${format}: ${file}\n`);
  }
  return 0;
}

/**
 * Called after every run: report.html, junit.xml and summary.md next to report.json. The run's
 * result is already safe on disk, so a failure here is a warning, never the run's failure.
 */
export async function writeRunReports(reportPath: string, report: Report, transcriptDir: string): Promise<void> {
  try {
    const loaded = [{ report, file: reportPath, transcriptDir }];
    const rendered = await renderFormats(loaded, ['html', 'junit', 'md'], () => undefined);
    for (const [format, text] of rendered) await writeAtomic(path.join(path.dirname(reportPath), FORMATS[format]), text);
  } catch (e) {
    process.stderr.write(`warning: report.html/junit.xml/summary.md not written: ${describeError(e)}\n`);
  }
}
