import { existsSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { resolvePaths } from '../config/paths.js';
import { intFromCli } from '../config/values.js';
import { describeError, RedgreenError } from '../errors.js';
import { commitSubjects, firstParentHistory } from '../fixtures/commit-diff.js';
import { planFromCommit } from '../fixtures/from-commit.js';
import { scanFixtures } from '../fixtures/load.js';
import { openRepository } from '../fixtures/mirror.js';
import type { FixtureDraft } from '../fixtures/write-fixture.js';
import { draftOf, SETUP_HINT, setupChoice, SetupShape } from './new-from-commit.js';
import { RunBaseSchema, runOptionsSchema } from './options.js';
import { verifyDrafts } from './verify-drafts.js';

const MineShape = {
  since: z.string().min(1).optional(),
  limit: intFromCli(1, 100_000).default(200),
  paths: z.array(z.string().min(1)).default([]),
  tests: z.array(z.string().min(1)).default([]),
  prefix: z
    .string()
    .regex(/^[A-Za-z0-9][A-Za-z0-9_.-]*$/, 'letters, digits, "_", "." and "-"')
    .optional(),
  byReference: z.boolean().default(false),
  maxFiles: intFromCli(1, 10_000).default(20),
  maxLines: intFromCli(1, 1_000_000).default(1000),
  ...SetupShape,
};
export const mineOptionsSchema = () => runOptionsSchema().extend(MineShape);
export type MineOptions = z.infer<ReturnType<typeof RunBaseSchema.extend<typeof MineShape>>>;

/** One commit of `mine --json`'s `commits`: kept as a fixture, or why not. */
export interface MineRow {
  commit: string;
  subject: string;
  id?: string;
  kept: boolean;
  reason: string;
  failToPass?: number;
  passToPass?: number;
}

/**
 * `redgreen mine <repo>`: walks first-parent history for commits that change both source and
 * tests, makes a candidate fixture of each, and keeps those that validate (RED, then GREEN, the
 * same over --repeat). Every other commit is listed with why (a merge, no test change, no source
 * change, too large, not RED, not GREEN, flaky, setup failed), and the walk goes on past each.
 * Exits 1 when the walk yields no fixture (none kept, none already made).
 */
export async function mine(ref: string, options: MineOptions): Promise<number> {
  const paths = resolvePaths({ ...options, root: options.root ?? '.' });
  const setup = setupChoice(options);
  const repo = await openRepository(ref, { cacheDir: paths.cacheDir });
  const shas = await firstParentHistory(repo, {
    ...(options.since ? { since: options.since } : {}),
    limit: options.limit,
    paths: options.paths,
  });
  const prefix =
    options.prefix ??
    (path
      .basename(ref.replace(/\.git\/?$/, '').replace(/\/+$/, ''))
      .replace(/[^A-Za-z0-9_.-]+/g, '_')
      .replace(/^[^A-Za-z0-9]+/, '') ||
      'repo');
  const subjectOf = await commitSubjects(repo, shas);
  const rows: MineRow[] = [];
  const drafts: FixtureDraft[] = [];
  const subjects = new Map<string, { commit: string; subject: string }>();
  const made = await fixturesOfCommits(paths);
  for (const sha of shas) {
    const id = made.get(sha) ?? `${prefix}-${sha.slice(0, 8)}`;
    if (made.has(sha) || existsSync(path.join(paths.fixturesDir, id))) {
      rows.push({ commit: sha, subject: subjectOf.get(sha) ?? '', id, kept: false, reason: `already a fixture: ${id}` });
      continue;
    }
    try {
      const c = await planFromCommit(repo, sha, {
        id,
        cacheDir: paths.cacheDir,
        tests: options.tests,
        maxFiles: options.maxFiles,
        maxLines: options.maxLines,
        ...(setup !== undefined ? { setup } : {}),
        ...(options.testCommand ? { testCommand: options.testCommand } : {}),
      });
      drafts.push(draftOf(c, repo, options.byReference));
      subjects.set(id, { commit: sha, subject: c.commit.subject });
    } catch (e) {
      // One commit's problem is that commit's reason; the walk goes on.
      // The message alone: the hint is for one command, not for every commit of a walk.
      const message = e instanceof RedgreenError ? e.message : describeError(e);
      rows.push({ commit: sha, subject: subjectOf.get(sha) ?? '', kept: false, reason: message.replace(/^[0-9a-f]{12} /, '') });
    }
  }
  process.stderr.write(`mine ${ref}: ${shas.length} commit(s) walked, ${drafts.length} candidate(s) to check\n`);
  const { verdicts } = drafts.length ? await verifyDrafts(drafts, paths, { ...options, quiet: options.json }) : { verdicts: [] };
  for (const v of verdicts) {
    const s = subjects.get(v.id)!;
    rows.push({
      ...s,
      id: v.id,
      kept: v.kept,
      reason: v.reason,
      ...(v.kept ? { failToPass: v.failToPass.length, passToPass: v.passToPass.length } : {}),
    });
  }
  const order = new Map(shas.map((s, i) => [s, i]));
  rows.sort((a, b) => order.get(a.commit)! - order.get(b.commit)!);
  if (options.json) process.stdout.write(`${JSON.stringify({ repo: ref, walked: shas.length, commits: rows }, null, 2)}\n`);
  else process.stdout.write(render(ref, shas.length, rows));
  // A walk that yields no fixture at all (none kept, none made before) is a failure a CI job sees.
  if (rows.some((r) => r.kept || r.reason.startsWith('already a fixture'))) return 0;
  const setupFailed = rows.some((r) => r.reason.startsWith('setup failed'));
  process.stderr.write(
    `mine ${ref}: no fixture in ${shas.length} commit(s): each is listed above with why; widen the walk (--since, --limit, --paths)${setupFailed ? `, or for the setup's failures: ${SETUP_HINT}` : ''}\n`,
  );
  return 1;
}

function render(ref: string, walked: number, rows: MineRow[]): string {
  const kept = rows.filter((r) => r.kept);
  const rest = rows.filter((r) => !r.kept);
  const lines = [`${ref}: ${walked} commit(s), ${kept.length} fixture(s) kept`];
  if (kept.length) lines.push('kept:');
  for (const r of kept)
    lines.push(`  ${r.id}  ${r.commit.slice(0, 12)}  ${r.subject}  (${r.failToPass} failToPass, ${r.passToPass} passToPass)`);
  if (rest.length) lines.push('not kept:');
  for (const r of rest) lines.push(`  ${r.commit.slice(0, 12)}  ${r.subject}\n      ${r.reason}`);
  return `${lines.join('\n')}\n`;
}

/** The fixtures here made from a commit (`new --from-commit`, an earlier `mine`), by that commit's sha. */
async function fixturesOfCommits(paths: { fixturesDir: string; oraclesDir: string }): Promise<Map<string, string>> {
  const scan = await scanFixtures(paths).catch(() => ({ fixtures: [] }));
  const made = new Map<string, string>();
  for (const f of scan.fixtures)
    if (f.manifest.origin?.kind === 'commit' && typeof f.manifest.origin.commit === 'string') made.set(f.manifest.origin.commit, f.id);
  return made;
}
