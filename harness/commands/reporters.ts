import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { describeError } from '../errors.js';
import { GithubReporter } from '../reporters/github.js';
import { ProgressReporter } from '../reporters/progress.js';
import type { Reporter, RunEnd } from '../reporters/reporter.js';
import { ExtrasCollector } from '../reporters/html-transcript.js';
import { renderTable } from '../reporters/table.js';
import { writeOutput } from './output-file.js';
import { FORMATS, renderFormats, type Format } from './report.js';
import type { ReporterSpec } from './reporter-spec.js';

/** `default`: progress on stderr, then the table and where the files are on stdout (unless stdout carries JSON). */
class DefaultReporter extends ProgressReporter {
  constructor(
    private readonly table: boolean,
    /** Files the user named (`junit=out/junit.xml`): said where they are, as report.json is. */
    private readonly files: readonly string[],
  ) {
    super();
  }

  onEnd(ends: readonly RunEnd[]): void {
    if (!this.table) return;
    for (const e of ends) {
      if (ends.length > 1) process.stdout.write(`\n== ${e.report.subject} ==\n`);
      const skipped = e.report.notSubmitted?.length ? `not submitted (not run): ${e.report.notSubmitted.join(', ')}\n` : '';
      process.stdout.write(`${renderTable(e.report)}\n${skipped}report: ${e.reportPath}\ntranscript: ${e.transcriptDir}\n`);
    }
    for (const f of this.files) process.stdout.write(`${f}\n`);
  }
}

/** `json`: the report on stdout (several runs: `{ "runs": [...] }`). */
const jsonReporter = (): Reporter => ({
  onEnd(ends) {
    const reports = ends.map((e) => e.report);
    process.stdout.write(`${JSON.stringify(reports.length === 1 ? reports[0] : { runs: reports }, null, 2)}\n`);
  },
});

/**
 * `html`, `junit`, `md`: the file next to report.json, or (`junit=out.xml`) one file for every run
 * of the command. The run's result is already safe in report.json, so a failure here is a warning.
 */
function fileReporter(format: Format, file: string | undefined, warn: (m: string) => void): Reporter {
  // The HTML page's patches and logs, taken from each run's events as they come (html-transcript.ts).
  const collected = new Map<string, ExtrasCollector>();
  const write = async (ends: readonly RunEnd[], target: string) => {
    try {
      const loaded = ends.map((e) => ({
        report: e.report,
        file: e.reportPath,
        transcriptDir: e.transcriptDir,
        collected: collected.get(e.report.runId),
      }));
      const text = (await renderFormats(loaded, [format], warn)).get(format)!;
      await mkdir(path.dirname(path.resolve(target)), { recursive: true });
      await writeOutput(target, text);
    } catch (e) {
      warn(`${path.basename(target)} not written: ${describeError(e)}`);
    }
  };
  const collect: Reporter =
    format === 'html'
      ? {
          onRunStart: (run) => void collected.set(run.runId, new ExtrasCollector(run.total + run.kept)),
          onFixtureEvent: (run, id, event) => collected.get(run.runId)?.onEvent(id, event),
        }
      : {};
  return file
    ? { ...collect, onEnd: (ends) => (ends.length ? write(ends, file) : undefined) }
    : {
        ...collect,
        onRunEnd: (end) =>
          write([end], path.join(path.dirname(end.reportPath), FORMATS[format])).finally(() => collected.delete(end.report.runId)),
      };
}

/**
 * The reporters a command runs with. No choice means the defaults: on the CLI the live progress
 * and the table (`--json`: the JSON instead of the table), and everywhere report.html, junit.xml
 * and summary.md next to report.json; under GitHub Actions also annotations and the job summary.
 * A choice (`--reporter`, the API's `reporter`, a config's) replaces them; report.json is always written.
 */
export function makeReporters(specs: readonly ReporterSpec[] | undefined, o: { cli: boolean; json: boolean }): Reporter[] {
  const chosen: ReporterSpec[] = specs?.length
    ? // --json asks for the JSON whatever else a config chose.
      [...specs, ...(o.json && !specs.some((x) => 'name' in x && x.name === 'json') ? [{ name: 'json' as const }] : [])]
    : [
        ...(o.cli ? [{ name: 'default' as const }] : []),
        ...(o.json ? [{ name: 'json' as const }] : []),
        ...FILE_DEFAULTS,
        ...(process.env.GITHUB_ACTIONS === 'true' ? [{ name: 'github' as const }] : []),
      ];
  const names = chosen.flatMap((s) => ('name' in s && typeof s.name === 'string' ? [s.name] : []));
  const stdoutJson = names.includes('json');
  const files = chosen.flatMap((s) => ('name' in s && 'file' in s && s.file ? [`${s.name}: ${s.file}`] : []));
  // Warnings go to the first reporter that shows them; without one (API), to nobody but that reporter list.
  const reporters: Reporter[] = [];
  const warn = (m: string) => reporters.forEach((r) => r.onLog?.(m, 'warning'));
  for (const s of chosen) {
    if (!('name' in s) || typeof s.name !== 'string') reporters.push(s as Reporter);
    else if (s.name === 'default') reporters.push(new DefaultReporter(!stdoutJson, files));
    else if (s.name === 'json') reporters.push(jsonReporter());
    else if (s.name === 'github') reporters.push(new GithubReporter(stdoutJson ? process.stderr : process.stdout));
    else reporters.push(fileReporter(s.name, 'file' in s ? s.file : undefined, warn));
  }
  return reporters;
}

const FILE_DEFAULTS = (['html', 'junit', 'md'] as const).map((name) => ({ name }));
