import { Argument, Command, CommanderError, Option } from 'commander';
import { backendOptions, collect, optionsOf, pathOptions, runOptions } from './cli-options.js';
import { GC_BACKENDS, IMAGE_BACKENDS } from './sandbox/backends.js';
import { harnessVersion } from './config/paths.js';
import { describeError, RedgreenError } from './errors.js';
import { RUNNERS } from './fixtures/runners.js';
import { setInterruptBudget } from './v8-budget.js';

/**
 * The top-level commands, each as it adds itself to the program, in the order --help lists them.
 * A command's module is imported when it runs, so `--version`, `--help` and `validate` never load
 * what they do not use (the Docker and E2B SDKs, execa, the scheduler).
 */
const COMMANDS: Record<string, (p: Command) => void> = {
  selfcheck: (p) => {
    runOptions(
      pathOptions(
        p
          .command('selfcheck')
          .description('prove fixtures: each must be RED with its bug and GREEN with its oracle')
          .argument('[ids...]', "fixture ids, globs ('bug0*') or their folders (default: all)"),
      ),
    )
      .option('--write', 'record the observed failToPass/passToPass in each fixture.json')
      .action(async (ids: string[], _opts: unknown, cmd: Command) => {
        const { selfcheckCli } = await import('./commands/cli-run.js');
        process.exitCode = await selfcheckCli(ids, cmd);
      });
  },
  run: (p) => {
    runOptions(
      pathOptions(
        p
          .command('run')
          .description('grade patches or an agent: RED baseline → patch → GREEN, SWE-bench semantics')
          .argument('[ids...]', "fixture ids, globs ('bug0*') or their folders (default: all)"),
      ),
    )
      .option(
        '--patches <path>',
        'predictions JSONL ({instance_id, model_name_or_path, model_patch}) or a folder of <fixture-id>.patch|.diff',
      )
      .option('--agent <command>', 'an agent command ({issue}, {workdir}, {fixture} are filled in), or "nop" or "oracle"')
      .option('--agent-timeout <seconds>', 'time limit of the agent per fixture', '1800')
      .option('--agent-network', 'let the agent reach the network (isolating backends)')
      .option('--no-baseline', 'skip the RED baseline run before grading')
      .option('--strict', 'reject (never apply) a patch that reaches into test-framework internals, instead of marking its pass suspicious')
      .action(async (ids: string[], _opts: unknown, cmd: Command) => {
        const { runCli } = await import('./commands/cli-run.js');
        process.exitCode = await runCli(ids, cmd);
      });
  },
  validate: (p) => {
    pathOptions(
      p
        .command('validate')
        .description('lint manifests and oracles without running anything')
        .argument('[ids...]', "fixture ids, globs ('bug0*') or their folders (default: all)"),
    )
      .option('--json', 'print findings as JSON')
      .action(async (ids: string[], _opts: unknown, cmd: Command) => {
        const [{ validate }, { PathOptionsSchema }, { z }] = await Promise.all([
          import('./commands/validate.js'),
          import('./commands/options.js'),
          import('zod'),
        ]);
        process.exitCode = await validate(ids, await optionsOf(() => PathOptionsSchema.extend({ json: z.boolean().default(false) }), cmd));
      });
  },
  list: (p) => {
    pathOptions(
      p
        .command('list')
        .description('list fixtures: id, runner, tags and the verdict of the last run that had them')
        .argument('[ids...]', "fixture ids, globs ('bug0*') or their folders (default: all)"),
    )
      .option('--tag <tag>', 'only fixtures with this tag (repeatable)', collect, [])
      .option('--json', 'print the list as JSON')
      .action(async (ids: string[], _opts: unknown, cmd: Command) => {
        const { list, ListOptionsSchema } = await import('./commands/list.js');
        process.exitCode = await list(await optionsOf(() => ListOptionsSchema, cmd, { ids }));
      });
  },
  init: (p) => {
    p.command('init')
      .description('start a project here: starter fixtures/ and oracles/, a sample predictions file and agent script, a config')
      .option('--root <dir>', 'where (default: here)')
      .action(async (opts: Record<string, unknown>) => {
        const { init, InitOptionsSchema } = await import('./commands/init.js');
        const { parseOptions } = await import('./commands/options.js');
        process.exitCode = await init(parseOptions(InitOptionsSchema, opts));
      });
  },
  doctor: (p) => {
    pathOptions(
      p
        .command('doctor')
        .description("check what redgreen needs here: the fixtures' runner tools and every backend, with how to get what is missing"),
    )
      .option('--json', 'print the findings as JSON')
      .action(async (_opts: unknown, cmd: Command) => {
        const { doctor, DoctorOptionsSchema } = await import('./commands/doctor.js');
        process.exitCode = await doctor(await optionsOf(() => DoctorOptionsSchema, cmd));
      });
  },
  new: (p) => {
    backendOptions(
      pathOptions(
        p
          .command('new')
          .description('scaffold a fixture (a working example to edit) and its oracle, or make one from a fix commit (--from-commit)')
          .argument('<id>', 'fixture id'),
      ),
    )
      // Checked once the config has run (it may register runners): a registered one is refused saying what to do.
      .option('--runner <runner>', `test runner of the example: ${RUNNERS.join(', ')} (default: pytest)`)
      .option('--from-commit <sha>', 'a fix commit: the fixture is its parent plus its test changes, the oracle its other changes')
      .option('--repo <path|url>', 'with --from-commit: the repository (a path, or a URL cloned into the mirror cache)')
      .option(
        '--tests <glob>',
        "with --from-commit: test files are the ones matching (repeatable; default: the runner's conventions)",
        collect,
        [],
      )
      .option('--issue-file <file>', 'with --from-commit: ISSUE.md from this file (default: the commit message)')
      .option('--by-reference', 'with --from-commit: fixture.json names the repository and commit instead of holding the files')
      .option('--keep-invalid', 'with --from-commit: write the fixture even when it is not RED or not GREEN')
      .option('--setup <command>', 'with --from-commit: the setup instead of the detected one (repeatable)', collect, [])
      .option('--no-setup', 'with --from-commit: no setup (the sandbox already has what the tests need)')
      .option('--setup-network', 'with --setup: its commands may reach the network')
      .option('--test-command <command>', 'with --from-commit: the test command instead of the detected one (it runs the detected runner)')
      .option('--repeat <n>', 'with --from-commit: run each test phase n times; a test that changes status is flaky')
      .action(async (id: string, _opts: unknown, cmd: Command) => {
        const { newFixture, NewOptionsSchema } = await import('./commands/new.js');
        const typed = (key: string) => cmd.getOptionValueSource(key) === 'cli';
        if (typed('fromCommit')) {
          if (typed('runner'))
            throw new RedgreenError('USAGE', '--runner and --from-commit: the runner is detected from the project', 'leave out --runner');
          const { newFromCommit, fromCommitOptionsSchema } = await import('./commands/new-from-commit.js');
          process.exitCode = await newFromCommit(id, await optionsOf(fromCommitOptionsSchema, cmd));
          return;
        }
        // Said before the options are parsed, where they would only be "unknown".
        for (const flag of [
          'repo',
          'tests',
          'issueFile',
          'byReference',
          'keepInvalid',
          'repeat',
          'backend',
          'setup',
          'setupNetwork',
          'testCommand',
        ])
          if (typed(flag))
            throw new RedgreenError('USAGE', `--${flag.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)} goes with --from-commit`);
        process.exitCode = await newFixture(id, await optionsOf(() => NewOptionsSchema, cmd));
      });
  },
  mine: (p) => {
    runOptions(
      pathOptions(
        p
          .command('mine')
          .description("turn a repository's history into fixtures: every first-parent commit that changes source and tests and validates")
          .argument('<repo>', 'a repository: a path, or a URL cloned into the mirror cache'),
      ),
    )
      .option('--since <date|sha>', 'only commits after this date (YYYY-MM-DD) or commit')
      .option('--limit <n>', 'walk at most n commits, newest first (default: 200)')
      .option('--paths <glob>', 'only commits touching these paths (repeatable)', collect, [])
      .option('--tests <glob>', "test files are the ones matching (repeatable; default: the runner's conventions)", collect, [])
      .option('--prefix <name>', 'fixture ids are <prefix>-<sha8> (default: the repository name)')
      .option('--by-reference', 'fixture.json names the repository and commit instead of holding the files')
      .option('--max-files <n>', 'a fix changing more source files is too large (default: 20)')
      .option('--max-lines <n>', 'a fix changing more lines is too large (default: 1000)')
      .option('--setup <command>', "every candidate's setup, instead of the detected one (repeatable)", collect, [])
      .option('--no-setup', 'no setup (the sandbox already has what the tests need)')
      .option('--setup-network', 'with --setup: its commands may reach the network')
      .option('--test-command <command>', "every candidate's test command, instead of the detected one (it runs the detected runner)")
      .action(async (ref: string, _opts: unknown, cmd: Command) => {
        const { mine, mineOptionsSchema } = await import('./commands/mine.js');
        process.exitCode = await mine(ref, await optionsOf(mineOptionsSchema, cmd));
      });
  },
  import: (p) => {
    pathOptions(
      p
        .command('import')
        .description('read a dataset into fixtures by reference: SWE-bench instances (JSONL or JSON)')
        .addArgument(new Argument('<format>', 'dataset format').choices(['swe-bench']))
        .argument('<file>', 'the instances: one JSON object per line, or a JSON array'),
    )
      .option(
        '--repos <dir>',
        "local clones of the instances' repositories (<owner>__<name>, <owner>/<name> or <name>); default: clone from GitHub",
      )
      .option('--spec <file>', 'per-repository test command and setup (JSON keyed by repo, with per-version overrides); default: detected')
      .action(async (format: string, file: string, _opts: unknown, cmd: Command) => {
        const { importDataset, ImportOptionsSchema } = await import('./commands/import.js');
        process.exitCode = await importDataset(format, file, await optionsOf(() => ImportOptionsSchema, cmd));
      });
  },
  export: (p) => {
    pathOptions(
      p
        .command('export')
        .description('write fixtures as SWE-bench instances (JSONL) or as Harbor tasks')
        .addArgument(new Argument('<format>', 'output format').choices(['swe-bench', 'harbor']))
        .argument('[ids...]', "fixture ids, globs ('bug0*') or their folders (default: all)"),
    )
      .option('--out <path>', 'swe-bench: the JSONL file (default: stdout); harbor: the folder the task folders go in')
      .option(
        '--repos <dir>',
        'swe-bench: where folder fixtures become repositories (local__<id>), as instances need a repository and commit',
      )
      .option(
        '--spec <file>',
        "swe-bench: also write the spec file an import reads them back with (each repository's runner, commands, setup)",
      )
      .action(async (format: string, ids: string[], _opts: unknown, cmd: Command) => {
        const { exportFixtures, ExportOptionsSchema } = await import('./commands/export.js');
        process.exitCode = await exportFixtures(format, ids, await optionsOf(() => ExportOptionsSchema, cmd));
      });
  },
  schema: (p) => {
    p.command('schema')
      .description('write fixture.schema.json (the manifest JSON Schema, for editors); --report: report.schema.json (report.json)')
      .option('--root <dir>', 'where to write it (default: the project root)')
      .option('--report', 'the JSON Schema of report.json instead')
      .action(async (opts: { root?: string; report?: boolean }) => {
        const [{ writeSchema }, { writeReportSchema }, { resolvePaths }] = await Promise.all([
          import('./commands/validate.js'),
          import('./commands/schema.js'),
          import('./config/paths.js'),
        ]);
        const root = resolvePaths(opts).root;
        process.stdout.write(`${await (opts.report ? writeReportSchema(root) : writeSchema(root))}\n`);
      });
  },
  replay: (p) => {
    backendOptions(
      pathOptions(
        p
          .command('replay')
          .description("tell a recorded run's story, or re-execute it with --verify and report drift")
          .argument('<transcript>', 'transcripts/<run-id> (or a run id)'),
      ),
    )
      .option('--fixture <id>', 'only this fixture (repeatable)', collect, [])
      .option('--speed <n>', 'replay n times faster than it happened; 0 shows everything at once', '1')
      .option('--full', 'show long output and patches unfolded')
      .option('--verify', 're-execute in fresh sandboxes and compare exit codes, test statuses and verdicts (exit 1 on drift)')
      .option('-j, --concurrency <n>', 'with --verify: fixtures run in parallel (default: CPU count)')
      .option('--json', 'with --verify: print the drift report as JSON')
      .action(async (ref: string, _opts: unknown, cmd: Command) => {
        const { replay, replayOptionsSchema } = await import('./commands/replay.js');
        process.exitCode = await replay(ref, await optionsOf(replayOptionsSchema, cmd));
      });
  },
  report: (p) => {
    const reportCmd = pathOptions(
      p
        .command('report')
        .description('re-render reports from report.json: html, junit, md (several runs: one matrix); report merge: combine shards')
        .argument('<runs...>', 'run ids, report folders or report.json files'),
    )
      .option('--format <list>', 'comma-separated: html, junit, md', 'html,junit,md')
      .option('--out <path>', "a file (one format), a folder, or - for stdout (default: the run's report folder)")
      .action(async (refs: string[], _opts: unknown, cmd: Command) => {
        const { report, ReportOptionsSchema } = await import('./commands/report.js');
        process.exitCode = await report(refs, await optionsOf(() => ReportOptionsSchema, cmd));
      });
    pathOptions(
      reportCmd
        .command('merge')
        .description("combine the reports of a run's shards (--shard i/n) into one run's report: summary, matrix, JUnit")
        .argument('<runs...>', 'the shard runs: run ids, report folders or report.json files'),
    )
      .option('--json', 'print the merged report as JSON')
      .action(async (refs: string[], _opts: unknown, cmd: Command) => {
        const { reportMergeCli, MergeOptionsSchema } = await import('./commands/report-merge.js');
        process.exitCode = await reportMergeCli(refs, await optionsOf(() => MergeOptionsSchema, cmd));
      });
  },
  compare: (p) => {
    pathOptions(
      p
        .command('compare')
        .description('compare two runs: verdict changes (regressions first), test statuses, timings')
        .argument('<run-a>', 'the earlier run')
        .argument('<run-b>', 'the later run'),
    )
      .option('--json', 'print the comparison as JSON')
      .option('--noise-ms <ms>', 'timing changes smaller than this are noise', '500')
      .option('--noise-ratio <x>', 'timing changes by a smaller factor than this are noise', '1.5')
      .action(async (a: string, b: string, _opts: unknown, cmd: Command) => {
        const { compare, CompareOptionsSchema } = await import('./commands/compare.js');
        process.exitCode = await compare(a, b, await optionsOf(() => CompareOptionsSchema, cmd));
      });
  },
  image: (p) => {
    const image = p.command('image').description('container images for the docker and podman backends');
    image
      .command('build')
      .description('build the default runtime image from Debian packages (debootstrap + import into the engine); reused unless --force')
      .addOption(new Option('--backend <name>', 'whose image store').choices(IMAGE_BACKENDS).default('docker'))
      .option('--tag <ref>', 'image reference to create')
      .option('--suite <name>', 'Debian suite')
      .option('--mirror <url>', "Debian mirror (default: the one this machine's apt uses)")
      .option('--network <name>', 'network for the build container')
      .option('--force', 'rebuild even if the tag exists')
      .option('--json', 'print the result as JSON')
      .action(async (opts: Record<string, unknown>) => {
        const [{ imageBuild, ImageBuildOptionsSchema }, { parseOptions }] = await Promise.all([
          import('./commands/image.js'),
          import('./commands/options.js'),
        ]);
        process.exitCode = await imageBuild(parseOptions(ImageBuildOptionsSchema, opts));
      });
  },
  gc: (p) => {
    p.command('gc')
      .description('remove sandboxes of runs that are no longer alive (docker containers and volumes, e2b sandboxes, host folders)')
      .addOption(new Option('--backend <name>', 'which sandboxes').choices(GC_BACKENDS).default('docker'))
      .option('--run <id>', "only this run's sandboxes, alive or not (repeatable)", collect, [])
      .option('--all-hosts', 'also runs started on other hosts (shared engine or service)')
      .option('--dry-run', 'only say what would be removed')
      .option('--json', 'print the result as JSON')
      .action(async (opts: Record<string, unknown>) => {
        const [{ gc, GcOptionsSchema }, { parseOptions }] = await Promise.all([
          import('./commands/gc.js'),
          import('./commands/options.js'),
        ]);
        process.exitCode = await gc(parseOptions(GcOptionsSchema, opts));
      });
  },
  cache: (p) => {
    const cache = p.command('cache').description('the setup cache: what setup commands produced, reused while the lockfiles stay the same');
    cache
      .command('list')
      .description('list cached setups (key, fixture, backend, size, last used), least recently used first')
      .option('--json', 'print the entries as JSON')
      .action(async (opts: Record<string, unknown>) => {
        const [{ cacheList, CacheListOptionsSchema }, { parseOptions }] = await Promise.all([
          import('./commands/cache.js'),
          import('./commands/options.js'),
        ]);
        process.exitCode = await cacheList(parseOptions(CacheListOptionsSchema, opts));
      });
    cache
      .command('prune')
      .description('remove cached setups: the least recently used until the cache fits its cap (REDGREEN_CACHE_MAX, default 2GiB)')
      .option('--all', 'remove every entry')
      .option('--max <size>', 'remove the least recently used until the rest fits in <size> (e.g. 500MB)')
      .option('--older-than <days>', 'remove entries not used for <days> days')
      .option('--json', 'print what was removed as JSON')
      .action(async (opts: Record<string, unknown>) => {
        const [{ cachePrune, CachePruneOptionsSchema }, { parseOptions }] = await Promise.all([
          import('./commands/cache.js'),
          import('./commands/options.js'),
        ]);
        process.exitCode = await cachePrune(parseOptions(CachePruneOptionsSchema, opts));
      });
  },
};

/**
 * The CLI. Given the command line, only the command it names is set up: its options are most of a
 * start's own work, and the others' would be built for nothing. --help, a command it does not
 * know or none at all sets up every one (to list them, or to suggest the nearest).
 */
export function program(argv: readonly string[] = []): Command {
  const p = new Command('redgreen')
    .description('Evaluate bug fixes: tests RED → patch → tests GREEN, scored and recorded.')
    .version(harnessVersion())
    .showHelpAfterError('(run with --help for usage)')
    .exitOverride();
  const named = argv[2];
  const only = named !== undefined && Object.hasOwn(COMMANDS, named) ? named : null;
  for (const [name, add] of Object.entries(COMMANDS)) if (!only || name === only) add(p);
  return p;
}

export async function main(argv: string[]): Promise<void> {
  setInterruptBudget();
  try {
    await program(argv).parseAsync(argv);
  } catch (e) {
    if (e instanceof CommanderError) {
      // Help and version exit 0; anything else commander refuses is a usage error.
      process.exitCode = e.exitCode === 0 ? 0 : 2;
      return;
    }
    const err = e instanceof RedgreenError ? e : new RedgreenError('INTERNAL', describeError(e), undefined, { cause: e });
    process.stderr.write(`redgreen: ${err.code.toLowerCase()}: ${err.message}${err.hint ? `\n  hint: ${err.hint}` : ''}\n`);
    if (err.code === 'INTERNAL' && e instanceof Error && e.stack) process.stderr.write(`${e.stack}\n`);
    process.exitCode = err.exitCode;
  }
}
