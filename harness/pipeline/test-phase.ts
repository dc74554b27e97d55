import { RedgreenError, tailOf } from '../errors.js';
import { checkPhase } from '../results/check.js';
import { adapterFor } from '../results/index.js';
import { missingRunnerTool } from '../results/missing-tool.js';
import { secondSignal } from '../results/signals.js';
import type { TestCase } from '../results/types.js';
import { runCommand, type FixtureContext } from './context.js';
import type { TestPhase } from './result.js';

/** Runs the fixture's tests `repeat` times; a test whose status differs between runs is flaky. */
export async function runTests(ctx: FixtureContext, phase: 'red' | 'green', repeat: number): Promise<TestPhase> {
  const { manifest } = ctx.fixture;
  const adapter = adapterFor(manifest.runner);
  const runs: TestPhase[] = [];
  for (let i = 0; i < repeat; i++) {
    const prepared = adapter.prepare({
      command: manifest.test.command,
      workdir: ctx.sandbox.workdir,
      scratchDir: ctx.sandbox.scratchDir,
      env: manifest.env,
      ...(manifest.test.reportPath ? { reportPath: manifest.test.reportPath } : {}),
    });
    if (prepared.files?.length) await ctx.sandbox.writeFiles(prepared.files);
    // A report left by the previous run must never be read as this run's.
    if (prepared.reportFile) await ctx.sandbox.removeFiles([prepared.reportFile]);
    const exec = await runCommand(
      ctx,
      phase,
      `${phase === 'red' ? 'RED' : 'GREEN'} tests${repeat > 1 ? ` #${i + 1}` : ''}`,
      prepared.command,
      {
        env: prepared.env,
        timeoutMs: manifest.test.timeoutSec * 1000,
      },
    );
    if (exec.aborted) throw new RedgreenError('INTERRUPTED', 'interrupted');
    const report = prepared.reportFile
      ? await ctx.sandbox.readFile(prepared.reportFile).then(
          (b) => b.toString('utf8'),
          () => null,
        )
      : null;
    const parseInput = { report, stdout: exec.stdout, stderr: exec.stderr, exitCode: exec.exitCode, workdir: ctx.sandbox.workdir };
    const parsed = adapter.parse(parseInput);
    const check = checkPhase(parsed, exec.exitCode, exec.timedOut, secondSignal(manifest.runner, prepared, parseInput, parsed));
    // First: a runner killed at a limit leaves no report, and "no JUnit XML" alone would not say why.
    if (exec.limit) check.problems.unshift(exec.limit.message);
    if (check.state === 'broken' && parsed.counts.total === 0) {
      const tool = missingRunnerTool(manifest.runner, exec.stderr, exec.exitCode, adapter.tools);
      if (tool) {
        throw new RedgreenError(
          'TOOL_MISSING',
          `${tool} is not installed where the tests run (exit ${exec.exitCode}): ${tailOf(exec.stderr)}`,
          `install it where the ${ctx.sandbox.backend} backend runs tests (on this machine, or in its image); \`redgreen doctor\` lists what is missing and how to get it`,
        );
      }
      // The command itself could not run (a typo, a missing script): say what it printed.
      if (exec.stderr.trim()) check.problems.push(`stderr: ${tailOf(exec.stderr)}`);
    }
    ctx.emit({
      type: 'tests',
      phase,
      run: i + 1,
      state: check.state,
      counts: { ...parsed.counts },
      tests: parsed.tests.map((t) => ({ id: t.id, status: t.status })),
    });
    runs.push({
      state: check.state,
      exitCode: exec.exitCode,
      durationMs: exec.durationMs,
      source: parsed.source,
      counts: parsed.counts,
      tests: parsed.tests,
      problems: check.problems,
      ...(exec.limit ? { limit: exec.limit } : {}),
      flaky: [],
      runs: 1,
    });
    if (check.state === 'timeout') break;
  }
  return mergeRuns(runs);
}

function mergeRuns(runs: TestPhase[]): TestPhase {
  const first = runs[0]!;
  if (runs.length === 1) return first;
  const statuses = new Map<string, Set<string>>();
  for (const r of runs) for (const t of r.tests) (statuses.get(t.id) ?? statuses.set(t.id, new Set()).get(t.id)!).add(t.status);
  const flaky = [...statuses]
    .filter(([id, s]) => s.size > 1 || runs.some((r) => !r.tests.some((t: TestCase) => t.id === id)))
    .map(([id]) => id);
  const timedOut = runs.find((r) => r.state === 'timeout');
  return {
    ...(timedOut ?? first),
    durationMs: runs.reduce((a, r) => a + r.durationMs, 0),
    problems: [...new Set(runs.flatMap((r) => r.problems))],
    flaky,
    runs: runs.length,
  };
}
