import path from 'node:path';
import { z } from 'zod';
import { newRunId, resolvePaths, shownPath } from '../config/paths.js';
import { RedgreenError } from '../errors.js';
import { summarize, writeReport, type Report } from '../reporters/report.js';
import { renderTable } from '../reporters/table.js';
import { writeAtomic } from '../transcripts/writer.js';
import { exitCodeFor } from './exit-code.js';
import { mergeTranscripts } from './merge-transcripts.js';
import { PathOptionsSchema } from './options.js';
import { FORMATS, loadReport, renderFormats, type LoadedReport } from './report.js';

export const MergeOptionsSchema = PathOptionsSchema.extend({ json: z.boolean().default(false) });
export type MergeOptions = z.infer<typeof MergeOptionsSchema>;

const describe = (l: LoadedReport) => `${l.report.runId} (${shownPath(l.file)})`;

/**
 * One run's report from the reports of its shards (`--shard i/n` on several machines or CI
 * jobs): every shard of one selection exactly once, same mode, subject and repeat count. The
 * result is an ordinary report: fixtures in id order, the summary recomputed over all of them.
 */
export function mergeShards(loaded: readonly LoadedReport[]): Report {
  if (!loaded.length) throw new RedgreenError('USAGE', 'report merge needs the reports of the shards');
  const notShard = loaded.filter((l) => !l.report.shard);
  if (notShard.length)
    throw new RedgreenError(
      'USAGE',
      `not a shard's report: ${notShard.map(describe).join(', ')}`,
      'merge the reports of runs made with --shard i/n',
    );
  const first = loaded[0]!.report;
  const differ = (what: string, value: (r: Report) => unknown) => {
    const odd = loaded.filter((l) => JSON.stringify(value(l.report)) !== JSON.stringify(value(first)));
    if (odd.length)
      throw new RedgreenError(
        'USAGE',
        `shards of different runs: ${what} is ${JSON.stringify(value(first))} in ${first.runId} but ${odd.map((l) => `${JSON.stringify(value(l.report))} in ${describe(l)}`).join(', ')}`,
        'merge only the shards of one selection, made with the same mode, patches or agent, and --repeat',
      );
  };
  differ('the mode', (r) => r.mode);
  differ('the subject', (r) => r.subject);
  differ('the repeat count', (r) => r.repeat);
  differ('the shard count', (r) => r.shard!.count);
  differ('the fixture selection (sha256 of its ids)', (r) => [r.shard!.of, r.shard!.selectionSha256]);
  const count = first.shard!.count;
  const seen = new Map<number, LoadedReport>();
  for (const l of loaded) {
    const i = l.report.shard!.index;
    if (seen.has(i)) throw new RedgreenError('USAGE', `shard ${i}/${count} given twice: ${describe(seen.get(i)!)} and ${describe(l)}`);
    seen.set(i, l);
  }
  const missing = Array.from({ length: count }, (_, i) => i + 1).filter((i) => !seen.has(i));
  if (missing.length)
    throw new RedgreenError(
      'USAGE',
      `shard${missing.length > 1 ? 's' : ''} ${missing.map((i) => `${i}/${count}`).join(', ')} missing: a merge needs every shard of the run`,
    );
  const reports = [...seen.entries()].sort((a, b) => a[0] - b[0]).map(([, l]) => l.report);
  const fixtures = reports.flatMap((r) => r.fixtures).sort((a, b) => a.fixtureId.localeCompare(b.fixtureId));
  const started = Math.min(...reports.map((r) => Date.parse(r.startedAt)));
  const finished = Math.max(...reports.map((r) => Date.parse(r.finishedAt)));
  const notSubmitted = reports.flatMap((r) => r.notSubmitted ?? []).sort();
  const backends = [...new Set(reports.map((r) => r.backend))];
  const bailed = reports.find((r) => r.bailed)?.bailed;
  return {
    schema: first.schema,
    runId: newRunId(first.mode, `merged-${first.subject}`),
    mode: first.mode,
    subject: first.subject,
    backend: backends.join(','),
    concurrency: reports.reduce((a, r) => a + r.concurrency, 0),
    repeat: first.repeat,
    startedAt: new Date(started).toISOString(),
    finishedAt: new Date(finished).toISOString(),
    durationMs: finished - started,
    interrupted: reports.some((r) => r.interrupted),
    unfinished: reports.flatMap((r) => r.unfinished).sort(),
    ...(notSubmitted.length ? { notSubmitted } : {}),
    ...(bailed !== undefined ? { bailed } : {}),
    mergedFrom: reports.map((r) => ({ runId: r.runId, shard: `${r.shard!.index}/${r.shard!.count}`, backend: r.backend })),
    summary: summarize(fixtures),
    fixtures,
  };
}

/**
 * Merges, writes reports/<merged-run-id>/ (report.json, report.html, junit.xml, summary.md) and,
 * from the shards' transcripts found here, transcripts/<merged-run-id>/.
 */
export async function reportMerge(
  refs: readonly string[],
  options: MergeOptions,
): Promise<{ report: Report; reportPath: string; transcriptsMissing: string[] }> {
  const paths = resolvePaths(options);
  const loaded: LoadedReport[] = [];
  for (const ref of refs) loaded.push(await loadReport(ref, paths));
  const report = mergeShards(loaded);
  const reportPath = await writeReport(paths.reportsDir, report);
  const transcriptsMissing = await mergeTranscripts(report, loaded, paths.transcriptsDir);
  const transcriptDir = path.join(paths.transcriptsDir, report.runId);
  const rendered = await renderFormats([{ report, file: reportPath, transcriptDir }], ['html', 'junit', 'md'], () => undefined);
  for (const [format, text] of rendered) await writeAtomic(path.join(path.dirname(reportPath), FORMATS[format]), text);
  return { report, reportPath, transcriptsMissing };
}

export async function reportMergeCli(refs: string[], options: MergeOptions): Promise<number> {
  const { report, reportPath, transcriptsMissing } = await reportMerge(refs, options);
  if (transcriptsMissing.length)
    process.stderr.write(
      `warning: no transcript here for ${transcriptsMissing.join(', ')}: the merged run's replay and logs leave those shards out\n`,
    );
  process.stdout.write(
    options.json
      ? `${JSON.stringify(report, null, 2)}\n`
      : `${renderTable(report)}\nmerged ${report.mergedFrom!.length} shards: ${reportPath}\n`,
  );
  return exitCodeFor(report.fixtures, report.interrupted);
}
