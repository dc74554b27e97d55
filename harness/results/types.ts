import type { RunnerId } from '../fixtures/manifest.js';
import type { RunnerExample } from '../fixtures/templates.js';
import type { FileToWrite } from '../sandbox/core/types.js';

export type TestStatus = 'passed' | 'failed' | 'error' | 'skipped';

export interface TestCase {
  /** Normalised per runner, stable across runs (see each adapter). */
  id: string;
  status: TestStatus;
  durationMs?: number;
  /** First lines of the failure message. */
  message?: string;
}

export interface TestCounts {
  passed: number;
  failed: number;
  errors: number;
  skipped: number;
  total: number;
}

export interface TestReport {
  /** Where the statuses came from: a structured report, or the output as a fallback. */
  source: 'junit' | 'json' | 'tap' | 'stdout' | 'exit-code' | 'none';
  tests: TestCase[];
  counts: TestCounts;
  /** Why the structured report could not be used, when the output was parsed instead. */
  note?: string;
}

export interface PrepareContext {
  command: string;
  workdir: string;
  scratchDir: string;
  env: Record<string, string>;
  reportPath?: string;
}

export interface PreparedRun {
  command: string;
  env: Record<string, string>;
  /** Sandbox path of the structured report the run leaves, if any. */
  reportFile?: string;
  /** Helper files the run needs (e.g. a reporter module), written into the scratch folder. */
  files?: FileToWrite[];
}

export interface ParseInput {
  report: string | null;
  stdout: string;
  stderr: string;
  exitCode: number;
  workdir: string;
}

export interface RunnerAdapter {
  readonly runner: RunnerId;
  /** Programs the runner needs (a registered runner): when one is missing, the failure is TOOL_MISSING. */
  readonly tools?: readonly string[];
  /** Test infrastructure of this runner that a patch may not change (globs). */
  readonly infrastructure: readonly string[];
  prepare(ctx: PrepareContext): PreparedRun;
  parse(input: ParseInput): TestReport;
  /** A registered runner's starter fixture: with one, `redgreen new --runner <id>` makes it. */
  readonly example?: RunnerExample;
}

export function countTests(tests: readonly TestCase[]): TestCounts {
  const c: TestCounts = { passed: 0, failed: 0, errors: 0, skipped: 0, total: tests.length };
  for (const t of tests) {
    if (t.status === 'passed') c.passed++;
    else if (t.status === 'failed') c.failed++;
    else if (t.status === 'error') c.errors++;
    else c.skipped++;
  }
  return c;
}

const SEVERITY: Record<TestStatus, number> = { skipped: 0, passed: 1, failed: 2, error: 3 };

/**
 * For runners whose ids are unique by construction (pytest node ids, unittest, go, cargo): an id
 * seen twice is one test reported per phase or repetition (a pytest teardown error after a pass,
 * a subtest, `go test -count`), kept once with its worst status so no failure is hidden.
 */
export function mergeRepeats(tests: readonly TestCase[]): TestCase[] {
  const byId = new Map<string, TestCase>();
  for (const t of tests) {
    const seen = byId.get(t.id);
    if (!seen || SEVERITY[t.status] > SEVERITY[seen.status]) byId.set(t.id, t);
  }
  return [...byId.values()];
}

/**
 * For runners where two tests may share a name (node:test, vitest `it.each` with a repeated row,
 * JUnit XML from any tool): every occurrence is its own test, the second as `name [2]` and so on
 * in report order, so a failing duplicate stays failed.
 */
export function numberRepeats(tests: readonly TestCase[]): TestCase[] {
  const seen = new Map<string, number>();
  return tests.map((t) => {
    const n = (seen.get(t.id) ?? 0) + 1;
    seen.set(t.id, n);
    return n === 1 ? t : { ...t, id: `${t.id} [${n}]` };
  });
}

export function firstLines(s: string | undefined, n = 6): string | undefined {
  if (!s) return undefined;
  const lines = s.trim().split('\n');
  return lines.slice(0, n).join('\n') + (lines.length > n ? '\n…' : '');
}
