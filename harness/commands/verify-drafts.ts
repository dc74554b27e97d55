import { cp, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { oracleProvider } from '../agents/static.js';
import type { ProjectPaths } from '../config/paths.js';
import { describeError, isRedgreenError, stripAnsi } from '../errors.js';
import { discoverFixtures } from '../fixtures/load.js';
import { repoReference } from '../fixtures/source.js';
import { writeFixture, type FixtureDraft } from '../fixtures/write-fixture.js';
import { parsePatch, touchedPaths } from '../patch/parse.js';
import type { FixtureResult } from '../pipeline/result.js';
import { execute, type ExecuteOutcome } from './execute.js';
import { withReporters } from './invoke.js';
import { makeReporters } from './reporters.js';
import type { RunOptions } from './options.js';
import { writeSchema } from './validate.js';

/** What became of one draft: kept (written into fixtures/ with its test lists) or why not. */
export interface DraftVerdict {
  id: string;
  verdict: string;
  /** In words a person acts on: "not RED: …", "setup failed: …". */
  reason: string;
  kept: boolean;
  failToPass: string[];
  passToPass: string[];
}

/**
 * Proves drafts before they become fixtures: each is written into a staging project, the whole
 * set is selfchecked in one run (RED, oracle, GREEN, `--repeat` times), and only the valid ones
 * are copied into fixtures/ and oracles/ with the failToPass/passToPass the run observed. With
 * `keepInvalid`, the others are written too, and reported as such. The run's report and
 * transcript go to the project's reports/ and transcripts/, as any selfcheck's.
 */
export async function verifyDrafts(
  drafts: readonly FixtureDraft[],
  paths: ProjectPaths,
  options: RunOptions & { keepInvalid?: boolean; quiet?: boolean },
): Promise<{ verdicts: DraftVerdict[]; outcome: ExecuteOutcome | null }> {
  const staging = await mkdtemp(path.join(os.tmpdir(), 'redgreen-stage-'));
  const roots = { fixturesDir: path.join(staging, 'fixtures'), oraclesDir: path.join(staging, 'oracles'), cacheDir: paths.cacheDir };
  const verdicts: DraftVerdict[] = [];
  try {
    const staged: string[] = [];
    for (const d of drafts) {
      try {
        await writeFixture(d, roots);
        staged.push(d.manifest.id);
      } catch (e) {
        if (!isRedgreenError(e)) throw e;
        verdicts.push({
          id: d.manifest.id,
          verdict: 'invalid_fixture',
          reason: `not written: ${describeError(e)}`,
          kept: false,
          failToPass: [],
          passToPass: [],
        });
      }
    }
    if (!staged.length) return { verdicts, outcome: null };
    const discovery = await discoverFixtures(roots, staged);
    // The default reporters (progress, the table), or with `quiet` only the report files: stdout is the caller's.
    const reporters = makeReporters(options.quiet ? [{ name: 'html' }, { name: 'junit' }, { name: 'md' }] : options.reporter, {
      cli: !options.quiet,
      json: false,
    });
    const [outcome] = await withReporters(reporters, { handleSignals: true }, async (ctx) => [
      await execute({
        mode: 'selfcheck',
        selection: { ids: staged, discovery, explicit: true },
        provider: oracleProvider,
        ctx,
        options: {
          ...options,
          root: paths.root,
          fixtures: roots.fixturesDir,
          oracles: roots.oraclesDir,
          reports: paths.reportsDir,
          transcripts: paths.transcriptsDir,
        },
      }),
    ]);
    const byId = new Map(outcome!.report.fixtures.map((r) => [r.fixtureId, r]));
    const draftOf = new Map(drafts.map((d) => [d.manifest.id, d]));
    for (const id of staged) {
      const r = byId.get(id);
      const valid = r?.verdict === 'valid' && !!r.observed;
      const tests = valid ? r.observed! : { failToPass: [], passToPass: [] };
      const keep = valid || !!options.keepInvalid;
      if (keep) await place(id, roots, paths, tests);
      verdicts.push({
        id,
        verdict: r?.verdict ?? 'infra_error',
        reason: r ? explain(r) + (r.verdict === 'not_green' ? dependencyNote(draftOf.get(id)!) : '') : 'the run ended before this fixture',
        kept: keep,
        ...tests,
      });
    }
    return { verdicts, outcome: outcome! };
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
}

/** Copies a staged fixture into the project, with the test lists the selfcheck observed. */
async function place(
  id: string,
  from: { fixturesDir: string; oraclesDir: string },
  to: ProjectPaths,
  tests: { failToPass: string[]; passToPass: string[] },
) {
  const manifestPath = path.join(from.fixturesDir, id, 'fixture.json');
  const json = JSON.parse(await readFile(manifestPath, 'utf8')) as Record<string, unknown>;
  json.tests = tests;
  const source = json.source as { repo?: unknown } | undefined;
  if (typeof source?.repo === 'string' && path.isAbsolute(source.repo))
    source.repo = repoReference(source.repo, path.join(to.fixturesDir, id), to.root);
  await writeFile(manifestPath, `${JSON.stringify(json, null, 2)}\n`);
  await mkdir(to.fixturesDir, { recursive: true });
  await mkdir(to.oraclesDir, { recursive: true });
  await cp(path.join(from.fixturesDir, id), path.join(to.fixturesDir, id), {
    recursive: true,
    verbatimSymlinks: true,
    errorOnExist: true,
    force: false,
  });
  await cp(path.join(from.oraclesDir, `${id}.patch`), path.join(to.oraclesDir, `${id}.patch`));
  // The manifest's "$schema" points at the project's copy, so editors can check it.
  if (!existsSync(path.join(to.root, 'fixture.schema.json'))) await writeSchema(to.root);
}

/** Files a setup installs dependencies from (npm, pip, go, cargo). */
const SETUP_INPUTS =
  /(^|\/)(package(-lock)?\.json|npm-shrinkwrap\.json|yarn\.lock|pnpm-lock\.yaml|requirements[^/]*\.txt|pyproject\.toml|setup\.(py|cfg)|Pipfile(\.lock)?|poetry\.lock|go\.(mod|sum)|Cargo\.(toml|lock))$/;

/**
 * Why a fix may not be GREEN that its test output does not say: its oracle changes a file its
 * setup installs dependencies from, and setup runs once, before the patch (a new dependency's
 * version is not installed when GREEN runs).
 */
function dependencyNote(d: FixtureDraft): string {
  if (!d.manifest.setup?.commands?.length) return '';
  // Not GREEN: the oracle applied, so it parses.
  const changed = touchedPaths(parsePatch(d.oracle)).filter((f) => SETUP_INPUTS.test(f));
  return changed.length
    ? ` (the fix changes ${changed.join(', ')}, which setup installs from, and setup runs before the patch only: what the fix installs is missing when GREEN runs)`
    : '';
}

/** A selfcheck verdict in the words of the issue: not RED, not GREEN, flaky, setup failed. */
export function explain(result: Pick<FixtureResult, 'verdict' | 'reason' | 'error'>): string {
  // Tools colour their errors (pip does even without a terminal): the reason is plain text.
  const r = { ...result, reason: stripAnsi(result.reason).replace(/^setup: /, '') };
  if (r.error?.code === 'SETUP_FAILED' || /^setup/.test(r.reason)) return `setup failed: ${r.reason}`;
  switch (r.verdict) {
    case 'valid':
      return 'RED, then GREEN';
    case 'not_red':
      return `not RED: ${r.reason}`;
    case 'not_green':
      return `not GREEN: ${r.reason}`;
    case 'flaky':
      return `flaky: ${r.reason}`;
    case 'patch_error':
      return `the fix does not apply: ${r.reason}`;
    default:
      return `${r.verdict}: ${r.reason}`;
  }
}
