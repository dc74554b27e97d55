import { appendFile } from 'node:fs/promises';
import path from 'node:path';
import type { FixtureResult } from '../pipeline/result.js';
import { EXPECTED } from '../scoring/verdicts.js';
import { renderMarkdown } from './markdown.js';
import type { Reporter, RunEnd, RunInfo } from './reporter.js';

// Workflow command escaping, as @actions/core does it: data and property values differ.
const data = (s: string) => s.replace(/%/g, '%25').replace(/\r/g, '%0D').replace(/\n/g, '%0A');
const property = (s: string) => data(s).replace(/:/g, '%3A').replace(/,/g, '%2C');

/** The `::error` workflow command GitHub shows as an annotation on the fixture's manifest. */
export function annotation(run: RunInfo, r: FixtureResult, cwd = process.cwd()): string {
  const file = path
    .relative(cwd, path.join(run.fixturesDir, r.fixtureId, 'fixture.json'))
    .split(path.sep)
    .join('/');
  const title = `redgreen ${run.mode}${run.model ? ` [${run.model}]` : ''}: ${r.fixtureId} is ${r.verdict}`;
  return `::error file=${property(file)},title=${property(title)}::${data(r.reason)}\n`;
}

/**
 * Under GitHub Actions (GITHUB_ACTIONS=true adds it to the default reporters): an error
 * annotation for every fixture that missed its expectation, and the Markdown summary appended to
 * the job summary ($GITHUB_STEP_SUMMARY). Annotations go to stdout, where the runner reads
 * workflow commands, unless stdout carries the JSON report; then to stderr, which it also reads.
 */
export class GithubReporter implements Reporter {
  constructor(
    private readonly out: NodeJS.WritableStream = process.stdout,
    private readonly summaryFile: string | undefined = process.env.GITHUB_STEP_SUMMARY,
  ) {}

  onFixtureEnd(run: RunInfo, r: FixtureResult): void {
    if (!EXPECTED.has(r.verdict)) this.out.write(annotation(run, r));
  }

  async onEnd(ends: readonly RunEnd[]): Promise<void> {
    if (!this.summaryFile || !ends.length) return;
    await appendFile(this.summaryFile, `${renderMarkdown(ends.map((e) => e.report))}\n`);
  }
}
