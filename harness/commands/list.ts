import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { resolvePaths } from '../config/paths.js';
import { scanSelection } from '../fixtures/select.js';
import { PathOptionsSchema } from './options.js';

export const ListOptionsSchema = PathOptionsSchema.extend({
  ids: z.array(z.string().min(1)).default([]),
  tag: z.array(z.string().min(1)).default([]),
  json: z.boolean().default(false),
});
export type ListOptions = z.infer<typeof ListOptionsSchema>;

export interface ListedFixture {
  id: string;
  runner: string | null;
  tags: string[];
  /** The verdict of the most recent run in the reports folder that had this fixture. */
  last: { verdict: string; runId: string; mode: string; finishedAt: string } | null;
  /** Why the manifest cannot be loaded, when it cannot. */
  problem?: string;
}

const ReportHead = z.object({
  runId: z.string(),
  mode: z.string(),
  finishedAt: z.string(),
  fixtures: z.array(z.object({ fixtureId: z.string(), verdict: z.string() })),
});

/** Every fixture's latest verdict over the reports folder (a report that cannot be read is skipped). */
async function lastVerdicts(reportsDir: string): Promise<Map<string, NonNullable<ListedFixture['last']>>> {
  const runs = await readdir(reportsDir).catch(() => [] as string[]);
  const last = new Map<string, NonNullable<ListedFixture['last']>>();
  for (const run of runs) {
    const text = await readFile(path.join(reportsDir, run, 'report.json'), 'utf8').catch(() => null);
    let json: unknown = null;
    try {
      json = text === null ? null : JSON.parse(text);
    } catch {
      continue;
    }
    const parsed = ReportHead.safeParse(json);
    if (!parsed.success) continue;
    const r = parsed.data;
    for (const f of r.fixtures) {
      const seen = last.get(f.fixtureId);
      if (!seen || seen.finishedAt < r.finishedAt)
        last.set(f.fixtureId, { verdict: f.verdict, runId: r.runId, mode: r.mode, finishedAt: r.finishedAt });
    }
  }
  return last;
}

export async function listFixtures(options: ListOptions): Promise<ListedFixture[]> {
  const paths = resolvePaths(options);
  // Manifests only: listing a thousand fixtures by reference checks out none of their trees.
  const { scan: discovery } = await scanSelection(paths, { patterns: options.ids, tags: options.tag });
  const last = await lastVerdicts(paths.reportsDir);
  const rows: ListedFixture[] = [
    ...discovery.fixtures.map((f) => ({
      id: f.id,
      runner: f.manifest.runner as string,
      tags: f.manifest.tags,
      last: last.get(f.id) ?? null,
    })),
    ...discovery.broken.map((b) => ({
      id: b.id,
      runner: null,
      tags: [],
      last: last.get(b.id) ?? null,
      problem: b.error.message.split('\n')[0]!,
    })),
  ];
  return rows.sort((a, b) => a.id.localeCompare(b.id));
}

/** `redgreen list [ids|globs] [--tag t] [--json]`: id, runner, tags, last verdict. */
export async function list(options: ListOptions): Promise<number> {
  const rows = await listFixtures(options);
  if (options.json) {
    process.stdout.write(`${JSON.stringify(rows, null, 2)}\n`);
    return 0;
  }
  const table = [
    ['fixture', 'runner', 'tags', 'last verdict'],
    ...rows.map((r) => [
      r.id,
      r.runner ?? '(invalid manifest)',
      r.tags.join(',') || '-',
      r.last ? `${r.last.verdict} (${r.last.runId})` : '-',
    ]),
  ];
  const widths = table[0]!.map((_, i) => Math.max(...table.map((row) => row[i]!.length)));
  for (const row of table) process.stdout.write(`${row.map((c, i) => (i < row.length - 1 ? c.padEnd(widths[i]!) : c)).join('  ')}\n`);
  process.stdout.write(`${rows.length} fixture(s)\n`);
  return 0;
}
