import { countTests, mergeRepeats, firstLines, type PreparedRun, type RunnerAdapter, type TestCase, type TestStatus } from './types.js';

interface GoTest {
  status?: TestStatus;
  durationMs?: number;
  /** Output the test printed (t.Log, fmt.Println, a panic), for the failure message. */
  lines: string[];
}

interface GoPackage {
  tests: Map<string, GoTest>;
  result?: 'pass' | 'fail' | 'skip';
  /** `build failed` or `setup failed`: the package never ran. */
  broken?: string;
  buildLog: string[];
  /** Everything the package printed, in order: read again as text when test2json lost a result. */
  output: string[];
  /** What the package printed outside its tests (TestMain, init). */
  log: string[];
}

interface GoEvent {
  Action?: string;
  Package?: string;
  ImportPath?: string;
  Test?: string;
  Output?: string;
  Elapsed?: number;
  FailedBuild?: string;
}

// `--- PASS: TestX/sub (0.00s)`, indented for subtests, and found anywhere in a line: output a
// test printed without a newline ends up in front of it (test2json of Go < 1.20 then loses it).
const RESULT = /--- (PASS|FAIL|SKIP): (\S+) \((\d+(?:\.\d+)?)s\)/;
const FRAME = /^=== (RUN|CONT|NAME|PAUSE)\s+(\S+)/;
// The line go test prints when a package is done (always with a tab after the word):
// `ok  \tpkg\t0.01s`, `FAIL\tpkg\t0.01s`, `FAIL\tpkg [build failed]`, `?   \tpkg\t[no test files]`.
const SUMMARY = /^(ok|FAIL|\?)\s*\t(\S+)(?:\t|$| \[(build failed|setup failed)\])/;
const STATUS: Record<string, TestStatus> = {
  PASS: 'passed',
  FAIL: 'failed',
  SKIP: 'skipped',
  pass: 'passed',
  fail: 'failed',
  skip: 'skipped',
};

function pkgOf(pkgs: Map<string, GoPackage>, name: string): GoPackage {
  let p = pkgs.get(name);
  if (!p) pkgs.set(name, (p = { tests: new Map(), buildLog: [], output: [], log: [] }));
  return p;
}

function testOf(p: GoPackage, name: string): GoTest {
  let t = p.tests.get(name);
  if (!t) p.tests.set(name, (t = { lines: [] }));
  return t;
}

/** Reads the text of `go test -v` (several packages one after the other) into `pkgs`. */
function readGoText(text: string, pkgs: Map<string, GoPackage>, only?: string): void {
  // Results come before the line naming their package, so they wait in a package of their own.
  let pending = pkgOf(new Map(), '');
  let current: GoTest | undefined;
  for (const raw of text.split('\n')) {
    const line = raw.trimEnd();
    const sum = SUMMARY.exec(line);
    if (sum) {
      const p = pkgOf(pkgs, only ?? sum[2]!);
      for (const [name, t] of pending.tests) {
        const into = testOf(p, name);
        if (into.status === undefined && t.status !== undefined) Object.assign(into, { status: t.status, durationMs: t.durationMs });
        if (!into.lines.length) into.lines = t.lines;
      }
      if (!only) p.log.push(...pending.log);
      if (sum[3] === 'build failed' || sum[3] === 'setup failed') p.broken = sum[3];
      p.result ??= sum[1] === 'ok' ? 'pass' : sum[1] === 'FAIL' ? 'fail' : 'skip';
      pending = pkgOf(new Map(), '');
      current = undefined;
      continue;
    }
    const frame = FRAME.exec(line);
    if (frame) {
      current = testOf(pending, frame[2]!);
      continue;
    }
    const r = RESULT.exec(line);
    if (r) {
      const t = testOf(pending, r[2]!);
      t.status = STATUS[r[1]!]!;
      t.durationMs = Math.round(Number(r[3]) * 1000);
      // Without -v, a failure's log lines follow its --- FAIL line.
      current = r[1] === 'FAIL' ? t : undefined;
      continue;
    }
    if (line && line !== 'PASS' && line !== 'FAIL') (current ? current.lines : pending.log).push(line);
  }
  // Results with no package line after them (the run was killed): kept under no package.
  if (pending.tests.size) {
    const p = pkgOf(pkgs, only ?? '');
    for (const [name, t] of pending.tests) if (!p.tests.has(name)) p.tests.set(name, t);
  }
}

/** Reads `go test -json` events; lines that are not events are read as text. */
function readGoJson(stdout: string, pkgs: Map<string, GoPackage>): { events: number; text: string } {
  let events = 0;
  const text: string[] = [];
  for (const line of stdout.split('\n')) {
    let e: GoEvent | undefined;
    if (line.startsWith('{')) {
      try {
        e = JSON.parse(line) as GoEvent;
      } catch {
        e = undefined; // a torn last line, or a test's own output
      }
    }
    if (!e?.Action || !(e.Package ?? e.ImportPath)) {
      text.push(line);
      continue;
    }
    events++;
    // `build-output` (Go 1.24+) names "pkg [pkg.test]".
    const p = pkgOf(pkgs, (e.Package ?? e.ImportPath!).split(' ')[0]!);
    const action = e.Action;
    if (action === 'build-output') p.buildLog.push(...(e.Output ?? '').split('\n').filter(Boolean));
    else if (action === 'build-fail') p.broken = 'build failed';
    else if (action === 'output') {
      p.output.push(e.Output ?? '');
      (e.Test ? testOf(p, e.Test).lines : p.log).push((e.Output ?? '').trimEnd());
    } else if (e.Test && (action === 'pass' || action === 'fail' || action === 'skip')) {
      const t = testOf(p, e.Test);
      t.status = STATUS[action]!;
      if (typeof e.Elapsed === 'number') t.durationMs = Math.round(e.Elapsed * 1000);
    } else if (e.Test && action === 'run') testOf(p, e.Test);
    else if (!e.Test && (action === 'pass' || action === 'fail' || action === 'skip')) {
      p.result = action;
      if (e.FailedBuild) p.broken = 'build failed';
    }
  }
  // test2json of Go < 1.20 loses results printed after output with no newline: read them again
  // from the package's own text, which also has its `FAIL pkg [build failed]` line.
  for (const [name, p] of pkgs) readGoText(p.output.join(''), pkgs, name);
  return { events, text: text.join('\n') };
}

/** The compiler's messages for a package: stderr's `# pkg` block, or build-output events. */
function buildMessage(name: string, p: GoPackage, stderr: string): string {
  const log = p.buildLog.filter((l) => !l.startsWith('# '));
  if (log.length) return firstLines(log.join('\n'))!;
  const lines = stderr.split('\n');
  const start = lines.findIndex((l) => l === `# ${name}` || l.startsWith(`# ${name} `));
  if (start >= 0) {
    const end = lines.findIndex((l, i) => i > start && (l.startsWith('# ') || l.startsWith('FAIL')));
    return firstLines(lines.slice(start + 1, end < 0 ? undefined : end).join('\n')) ?? p.broken!;
  }
  return firstLines(stderr) ?? `${p.broken}`;
}

const NOISE = /^(=== |--- |\s+--- |PASS$|FAIL$|ok\s|FAIL\s|exit status)/;

function toCases(name: string, p: GoPackage, stderr: string): TestCase[] {
  const out: TestCase[] = [];
  if (p.broken) return [{ id: name, status: 'error', message: buildMessage(name, p, stderr) }];
  for (const [test, t] of p.tests) {
    // A test that started and never finished: the binary died (panic, os.Exit, -timeout).
    // When the package still passed, test2json only lost its line, so it passed too.
    const status = t.status ?? (p.result === 'pass' ? 'passed' : 'failed');
    const lines = t.lines.map((l) => l.trim()).filter((l) => l && !NOISE.test(l));
    const message =
      status === 'failed'
        ? (firstLines(lines.join('\n')) ?? (t.status ? undefined : 'the test never finished: the test binary exited'))
        : undefined;
    out.push({
      id: name ? `${name}::${test}` : test,
      status,
      ...(t.durationMs !== undefined ? { durationMs: t.durationMs } : {}),
      ...(message ? { message } : {}),
    });
  }
  // A package that failed with no failing test (TestMain, init, a panic outside a test).
  if (p.result === 'fail' && !out.some((t) => t.status === 'failed' || t.status === 'error')) {
    const log = p.log.filter((l) => l.trim() && !NOISE.test(l));
    out.push({ id: name, status: 'error', message: firstLines(log.slice(-6).join('\n')) ?? 'the package failed outside its tests' });
  }
  return out;
}

/** `<package import path>::TestName`, subtests as `TestName/sub_case`. */
export function parseGoOutput(stdout: string, stderr: string): { tests: TestCase[]; json: boolean } {
  const pkgs = new Map<string, GoPackage>();
  const { events, text } = readGoJson(stdout, pkgs);
  readGoText(text, pkgs);
  const tests = [...pkgs].flatMap(([name, p]) => toCases(name, p, stderr));
  return { tests: mergeRepeats(tests), json: events > 0 };
}

// `go test`, maybe after variable assignments (`X=1 go test`).
const GO_TEST = /^(\s*(?:[A-Za-z_]\w*=\S*\s+)*go\s+test)(?=\s|$)/;

/** A lone `go test …` with no shell around it: flags can be added to it safely. */
function isPlainGoTest(command: string): boolean {
  const unquoted = command.replace(/'[^']*'|"(?:[^"\\]|\\.)*"/g, '');
  return GO_TEST.test(command) && !/[;&|<>`$()\n\\]/.test(unquoted) && !/\s-args(\s|$)/.test(unquoted);
}

export const goAdapter: RunnerAdapter = {
  runner: 'go',
  infrastructure: ['go.mod', 'go.sum', 'go.work', 'go.work.sum'],
  prepare(ctx): PreparedRun {
    if (/(^|\s)-json(\s|$)/.test(ctx.command)) return { command: ctx.command, env: {} };
    // `go test -json` streams test2json events; its flag must come before `-args`.
    if (isPlainGoTest(ctx.command)) return { command: ctx.command.replace(GO_TEST, '$1 -json'), env: {} };
    // A wrapped go test (`cd x && go test`, a Makefile): GOFLAGS reaches it, and -v makes it list
    // every test, which is then read as text.
    const goflags = ctx.env.GOFLAGS ? `${ctx.env.GOFLAGS} -v` : '-v';
    return { command: ctx.command, env: { GOFLAGS: goflags } };
  },
  parse(input) {
    const { tests, json } = parseGoOutput(input.stdout, input.stderr);
    const note = tests.length || !input.stderr.trim() ? undefined : `go test reported no package: ${firstLines(input.stderr, 3)}`;
    return { source: json ? 'json' : 'stdout', tests, counts: countTests(tests), ...(note ? { note } : {}) };
  },
};
