import { Argument, Command, CommanderError, Option } from 'commander';
import { BACKEND_CHOICES, parseOptions, PathOptionsSchema, SelfcheckOptionsSchema } from './commands/options.js';
import { backendFlags, GC_BACKENDS, IMAGE_BACKENDS } from './sandbox/backends.js';
import { harnessVersion, resolvePaths } from './config/paths.js';
import { describeError, RedgreenError } from './errors.js';
import { TEMPLATES } from './fixtures/templates.js';

// Each command's module is imported when the command runs, so `--version`, `--help` and `validate`
// never load what they do not use (the Docker and E2B SDKs, execa, the scheduler).

const collect = (v: string, prev: string[]) => [...prev, v];

function pathOptions(cmd: Command): Command {
  return cmd
    .option('--root <dir>', 'project folder with fixtures/ and oracles/ (default: here if it has fixtures/, else the bundled ones)')
    .option('--fixtures <dir>', 'fixtures folder (default: <root>/fixtures)')
    .option('--oracles <dir>', 'oracles folder (default: <root>/oracles)')
    .option('--reports <dir>', 'reports folder (default: <root>/reports)')
    .option('--transcripts <dir>', 'transcripts folder (default: <root>/transcripts)');
}

/** Which backend and how to reach it (e2b); shared by selfcheck, run and replay --verify. */
function backendOptions(cmd: Command): Command {
  cmd
    .addOption(
      new Option('--backend <name>', 'sandbox backend (default: local; auto: the strongest available here)').choices([...BACKEND_CHOICES]),
    )
    .option('--pass-env <name>', 'pass a host environment variable into sandboxes (repeatable)', collect, []);
  // Each backend's own options, from its descriptor in the registry.
  for (const f of backendFlags()) cmd.option(f.flags, f.description, f.default);
  return cmd;
}

function runOptions(cmd: Command): Command {
  return backendOptions(cmd)
    .option('-j, --concurrency <n>', 'fixtures run in parallel (default: CPU count)')
    .option('--repeat <n>', 'run each test phase n times; tests that change status are flaky (default: 1)')
    .option('--json', 'print the report as JSON on stdout')
    .option('--resume <run-id>', 'continue an interrupted run: finished fixtures are kept, the others run again')
    .option('--force', 'with --resume: resume even if fixtures or oracles changed since')
    .option('--no-cache', 'run every setup instead of reusing cached results');
}

function program(): Command {
  const p = new Command('redgreen')
    .description('Evaluate bug fixes: tests RED → patch → tests GREEN, scored and recorded.')
    .version(harnessVersion())
    .showHelpAfterError('(run with --help for usage)')
    .exitOverride();

  runOptions(
    pathOptions(
      p
        .command('selfcheck')
        .description('prove fixtures: each must be RED with its bug and GREEN with its oracle')
        .argument('[ids...]', 'fixture ids (default: all)'),
    ),
  )
    .option('--write', 'record the observed failToPass/passToPass in each fixture.json')
    .action(async (ids: string[], opts: Record<string, unknown>) => {
      const { selfcheck } = await import('./commands/selfcheck.js');
      process.exitCode = await selfcheck(ids, parseOptions(SelfcheckOptionsSchema, opts));
    });

  runOptions(
    pathOptions(
      p
        .command('run')
        .description('grade patches or an agent: RED baseline → patch → GREEN, SWE-bench semantics')
        .argument('[ids...]', 'fixture ids (default: all)'),
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
    .action(async (ids: string[], opts: Record<string, unknown>) => {
      const { run, AgentRunOptionsSchema } = await import('./commands/run.js');
      process.exitCode = await run(ids, parseOptions(AgentRunOptionsSchema, opts));
    });

  pathOptions(
    p
      .command('validate')
      .description('lint manifests and oracles without running anything')
      .argument('[ids...]', 'fixture ids (default: all)'),
  )
    .option('--json', 'print findings as JSON')
    .action(async (ids: string[], opts: Record<string, unknown>) => {
      const { validate } = await import('./commands/validate.js');
      process.exitCode = await validate(ids, { ...parseOptions(PathOptionsSchema, opts), json: Boolean(opts.json) });
    });

  pathOptions(
    p
      .command('doctor')
      .description("check what redgreen needs here: the fixtures' runner tools and every backend, with how to get what is missing"),
  )
    .option('--json', 'print the findings as JSON')
    .action(async (opts: Record<string, unknown>) => {
      const { doctor, DoctorOptionsSchema } = await import('./commands/doctor.js');
      process.exitCode = await doctor(parseOptions(DoctorOptionsSchema, opts));
    });

  backendOptions(
    pathOptions(
      p
        .command('new')
        .description('scaffold a fixture (a working example to edit) and its oracle, or make one from a fix commit (--from-commit)')
        .argument('<id>', 'fixture id'),
    ),
  )
    .addOption(new Option('--runner <runner>', 'test runner of the example (default: pytest)').choices(Object.keys(TEMPLATES)))
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
    .option('--repeat <n>', 'with --from-commit: run each test phase n times; a test that changes status is flaky')
    .action(async (id: string, opts: Record<string, unknown>) => {
      const { newFixture } = await import('./commands/new.js');
      process.exitCode = await newFixture(id, opts);
    });

  runOptions(
    pathOptions(
      p
        .command('mine')
        .description("turn a repository's history into fixtures: every first-parent commit that changes source and tests and validates")
        .argument('<repo>', 'a repository: a path, or a URL cloned into the mirror cache'),
    ),
  )
    .option('--since <date|sha>', 'only commits after this date (YYYY-MM-DD) or commit')
    .option('--limit <n>', 'walk at most n commits, newest first', '200')
    .option('--paths <glob>', 'only commits touching these paths (repeatable)', collect, [])
    .option('--tests <glob>', "test files are the ones matching (repeatable; default: the runner's conventions)", collect, [])
    .option('--prefix <name>', 'fixture ids are <prefix>-<sha8> (default: the repository name)')
    .option('--by-reference', 'fixture.json names the repository and commit instead of holding the files')
    .option('--max-files <n>', 'a fix changing more source files is too large', '20')
    .option('--max-lines <n>', 'a fix changing more lines is too large', '1000')
    .action(async (ref: string, opts: Record<string, unknown>) => {
      const { mine, MineOptionsSchema } = await import('./commands/mine.js');
      process.exitCode = await mine(ref, parseOptions(MineOptionsSchema, opts));
    });

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
    .action(async (format: string, file: string, opts: Record<string, unknown>) => {
      const { importDataset, ImportOptionsSchema } = await import('./commands/import.js');
      process.exitCode = await importDataset(format, file, parseOptions(ImportOptionsSchema, opts));
    });

  pathOptions(
    p
      .command('export')
      .description('write fixtures as SWE-bench instances (JSONL) or as Harbor tasks')
      .addArgument(new Argument('<format>', 'output format').choices(['swe-bench', 'harbor']))
      .argument('[ids...]', 'fixture ids (default: all)'),
  )
    .option('--out <path>', 'swe-bench: the JSONL file (default: stdout); harbor: the folder the task folders go in')
    .option(
      '--repos <dir>',
      'swe-bench: where folder fixtures become repositories (local__<id>), as instances need a repository and commit',
    )
    .action(async (format: string, ids: string[], opts: Record<string, unknown>) => {
      const { exportFixtures, ExportOptionsSchema } = await import('./commands/export.js');
      process.exitCode = await exportFixtures(format, ids, parseOptions(ExportOptionsSchema, opts));
    });

  p.command('schema')
    .description('write fixture.schema.json (the manifest JSON Schema, for editors)')
    .option('--root <dir>', 'where to write it (default: the project root)')
    .action(async (opts: { root?: string }) => {
      const { writeSchema } = await import('./commands/validate.js');
      process.stdout.write(`${await writeSchema(resolvePaths(opts).root)}\n`);
    });

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
    .action(async (ref: string, opts: Record<string, unknown>) => {
      const { replay, ReplayOptionsSchema } = await import('./commands/replay.js');
      process.exitCode = await replay(ref, parseOptions(ReplayOptionsSchema, opts));
    });

  pathOptions(
    p
      .command('report')
      .description('re-render reports from report.json: html, junit, md (several runs: one matrix)')
      .argument('<runs...>', 'run ids, report folders or report.json files'),
  )
    .option('--format <list>', 'comma-separated: html, junit, md', 'html,junit,md')
    .option('--out <path>', "a file (one format), a folder, or - for stdout (default: the run's report folder)")
    .action(async (refs: string[], opts: Record<string, unknown>) => {
      const { report, ReportOptionsSchema } = await import('./commands/report.js');
      process.exitCode = await report(refs, parseOptions(ReportOptionsSchema, opts));
    });

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
    .action(async (a: string, b: string, opts: Record<string, unknown>) => {
      const { compare, CompareOptionsSchema } = await import('./commands/compare.js');
      process.exitCode = await compare(a, b, parseOptions(CompareOptionsSchema, opts));
    });
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
      const { imageBuild, ImageBuildOptionsSchema } = await import('./commands/image.js');
      process.exitCode = await imageBuild(parseOptions(ImageBuildOptionsSchema, opts));
    });

  p.command('gc')
    .description('remove sandboxes of runs that are no longer alive (docker containers and volumes, e2b sandboxes, host folders)')
    .addOption(new Option('--backend <name>', 'which sandboxes').choices(GC_BACKENDS).default('docker'))
    .option('--run <id>', "only this run's sandboxes, alive or not (repeatable)", collect, [])
    .option('--all-hosts', 'also runs started on other hosts (shared engine or service)')
    .option('--dry-run', 'only say what would be removed')
    .option('--json', 'print the result as JSON')
    .action(async (opts: Record<string, unknown>) => {
      const { gc, GcOptionsSchema } = await import('./commands/gc.js');
      process.exitCode = await gc(parseOptions(GcOptionsSchema, opts));
    });

  const cache = p.command('cache').description('the setup cache: what setup commands produced, reused while the lockfiles stay the same');
  cache
    .command('list')
    .description('list cached setups (key, fixture, backend, size, last used), least recently used first')
    .option('--json', 'print the entries as JSON')
    .action(async (opts: Record<string, unknown>) => {
      const { cacheList, CacheListOptionsSchema } = await import('./commands/cache.js');
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
      const { cachePrune, CachePruneOptionsSchema } = await import('./commands/cache.js');
      process.exitCode = await cachePrune(parseOptions(CachePruneOptionsSchema, opts));
    });
  return p;
}

async function main(argv: string[]): Promise<void> {
  try {
    await program().parseAsync(argv);
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

await main(process.argv);
