import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { resolvePaths, shownPath } from '../config/paths.js';
import { RedgreenError } from '../errors.js';
import { planFromCommit, type CommitCandidate, type SetupChoice } from '../fixtures/from-commit.js';
import { isUrl, openRepository, resolveCommit, type Repository } from '../fixtures/mirror.js';
import type { FixtureDraft } from '../fixtures/write-fixture.js';
import { RunBaseSchema, runOptionsSchema } from './options.js';
import { verifyDrafts } from './verify-drafts.js';

/**
 * --setup <command> (repeatable) and --no-setup (false), --setup-network: the setup instead of the
 * detected one; --test-command: the test command instead of the detected one.
 */
export const SetupShape = {
  setup: z.union([z.literal(false), z.array(z.string().min(1, 'an empty --setup command'))]).optional(),
  setupNetwork: z.boolean().default(false),
  testCommand: z.string().trim().min(1, 'an empty --test-command').optional(),
};

/** The setup the options give, or undefined to keep the detected one. */
export function setupChoice(o: { setup?: string[] | false | undefined; setupNetwork: boolean }): SetupChoice | undefined {
  if (o.setupNetwork && !o.setup) {
    throw new RedgreenError(
      'USAGE',
      '--setup-network goes with --setup <command>',
      'a detected setup already says whether it needs the network',
    );
  }
  if (o.setup === false) return null;
  return o.setup?.length ? { commands: o.setup, network: o.setupNetwork } : undefined;
}

/** What to try when a candidate is not RED or not GREEN for another reason than its setup. */
export const TESTS_HINT =
  '--tests <glob> if test files were misjudged, --test-command <command> if the detected command runs tests it should not (or misses some)';

/** What to try when a candidate's setup failed: the detected setup may need what this machine lacks. */
export const SETUP_HINT =
  '--setup <command> to give the setup yourself (--setup-network if it installs from the network), --no-setup when the sandbox already has what the tests need';

const FromCommitShape = {
  fromCommit: z.string().min(1),
  repo: z.string().min(1, 'give the repository: --repo <path|url>'),
  tests: z.array(z.string().min(1)).default([]),
  issueFile: z.string().min(1).optional(),
  byReference: z.boolean().default(false),
  keepInvalid: z.boolean().default(false),
  ...SetupShape,
};
export const fromCommitOptionsSchema = () => runOptionsSchema().extend(FromCommitShape);
export type FromCommitOptions = z.infer<ReturnType<typeof RunBaseSchema.extend<typeof FromCommitShape>>>;

/**
 * `redgreen new <id> --from-commit <sha> --repo <path|url>`: the parent's tree plus the fix's test
 * changes is the fixture, the fix's other changes its oracle, the commit message its ISSUE.md.
 * What was detected is printed with why; the fixture is selfchecked before it is written, and one
 * that is not RED or not GREEN is reported and left out (unless --keep-invalid).
 */
export async function newFromCommit(id: string, options: FromCommitOptions): Promise<number> {
  const paths = resolvePaths({ ...options, root: options.root ?? '.' });
  // Refused before any work: the selfcheck would otherwise run only to find nowhere to put the fixture.
  if ((await readdir(path.join(paths.fixturesDir, id)).catch(() => [])).length) {
    throw new RedgreenError('USAGE', `${shownPath(path.join(paths.fixturesDir, id))} already exists and is not empty`, 'pick another id');
  }
  const setup = setupChoice(options);
  const repo = await openRepository(options.repo, { cacheDir: paths.cacheDir });
  const sha = await resolveCommit(repo, options.fromCommit);
  const issue = options.issueFile
    ? await readFile(options.issueFile, 'utf8').catch(() => {
        throw new RedgreenError('USAGE', `--issue-file: cannot read ${options.issueFile}`);
      })
    : undefined;
  const candidate = await planFromCommit(repo, sha, {
    id,
    cacheDir: paths.cacheDir,
    tests: options.tests,
    ...(issue !== undefined ? { issue } : {}),
    ...(setup !== undefined ? { setup } : {}),
    ...(options.testCommand ? { testCommand: options.testCommand } : {}),
  });
  process.stderr.write(describeCandidate(candidate, repo));
  const { verdicts } = await verifyDrafts([draftOf(candidate, repo, options.byReference)], paths, options);
  const v = verdicts[0]!;
  const where = `${shownPath(path.join(paths.fixturesDir, id))}/ and ${shownPath(path.join(paths.oraclesDir, `${id}.patch`))}`;
  if (v.verdict === 'valid') {
    process.stderr.write(`created ${where}: ${v.verdict} (${v.failToPass.length} failToPass, ${v.passToPass.length} passToPass)\n`);
    return 0;
  }
  process.stderr.write(
    v.kept
      ? `written anyway (--keep-invalid): ${where} is ${v.verdict}: ${v.reason}\n`
      : `not written: ${id} is ${v.verdict}: ${v.reason}\n  hint: ${/^setup /.test(v.reason) ? SETUP_HINT : TESTS_HINT}, --keep-invalid to write it and fix it by hand\n`,
  );
  return 1;
}

/** The draft to write: a copy of the parent's tree, or a reference to the parent commit. */
export function draftOf(c: CommitCandidate, repo: Repository, byReference: boolean): FixtureDraft {
  const tree: FixtureDraft['tree'] = byReference
    ? { mode: 'reference', repo: isUrl(repo.ref) ? repo.ref : path.resolve(repo.ref), commit: c.commit.parent, testPatch: c.testPatch }
    : { mode: 'copy', from: c.parentTree, testPatch: c.testPatch };
  return { manifest: c.manifest, issue: c.issue, oracle: c.oracle, tree };
}

/** What was read from the commit and detected in the project, and why. */
export function describeCandidate(c: CommitCandidate, repo: Repository): string {
  const d = c.detection;
  const setup = c.manifest.setup;
  const shown = setup?.commands?.join(' && ') || (c.setupGiven ? '(none: --no-setup)' : '(none)');
  const given = c.setupGiven && setup ? ' (given: --setup)' : '';
  const lines = [
    `${c.id}: ${repo.ref} ${c.commit.sha.slice(0, 12)} "${c.commit.subject}" (parent ${c.commit.parent.slice(0, 12)})`,
    `  runner: ${d.runner} (${d.language}), test command: ${c.manifest.test.command}${c.testCommandGiven ? ' (given: --test-command)' : ''}`,
    ...d.reasons.map((r) => `    because ${r}`),
    `  setup: ${shown}${setup?.network ? ' (with network)' : ''}${given}`,
    ...(Object.keys(d.env).length
      ? [
          `  env: ${Object.entries(d.env)
            .map(([k, v]) => `${k}=${v}`)
            .join(' ')}`,
        ]
      : []),
    `  tests (the test patch): ${c.testFiles.join(', ')}`,
    `  source (the oracle): ${c.sourceFiles.join(', ')}`,
  ];
  return `${lines.join('\n')}\n`;
}
