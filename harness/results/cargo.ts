import path from 'node:path';
import { countTests, mergeRepeats, firstLines, type RunnerAdapter, type TestCase, type TestStatus } from './types.js';

/** One test binary's run: the lines between `running N tests` and `test result:`. */
interface Block {
  target: string;
  /** The binary's name without cargo's hash (its crate), to tell apart packages of a workspace. */
  stem: string;
  tests: Map<string, { status?: TestStatus; lines: string[] }>;
  failures: Set<string>;
  pending: string[];
  done: boolean;
  summaryPassed: number;
  /** `test x ... ` lines seen: none at all means libtest's terse format (`-q`). */
  seen: number;
  tail: string[];
}

// `Running unittests src/lib.rs (target/debug/deps/calc-0123abcd)`, `Running tests/it.rs (…)`;
// cargo before 1.58 printed only the binary: `Running target/debug/deps/calc-0123abcd`.
const RUNNING = /^\s*Running (unittests )?(\S+)(?: \((.+)\))?\s*$/;
const DOCTESTS = /^\s*Doc-tests (\S+)\s*$/;
const BLOCK = /^running \d+ tests?$/;
const WORD = /^(ok|FAILED|ignored(?:, .*)?|bench:.*)$/;
const SUMMARY = /^test result: (ok|FAILED)\. (\d+) passed; (\d+) failed/;
const DOCTEST_NAME = /^(.+?\.rs - .+?) \(line (\d+)\)$/;
// What libtest appends to a name for the kind of test: not part of its path.
const KIND = / - (?:should panic|compile fail|compile)$/;

function stemOf(binary: string): string {
  return path.basename(binary).replace(/-[0-9a-f]{8,}$/, '');
}

function statusOf(word: string): TestStatus {
  if (word === 'FAILED') return 'failed';
  return word.startsWith('ignored') ? 'skipped' : 'passed';
}

/**
 * cargo names a test binary on stderr and libtest prints its results on stdout: when the streams
 * were kept apart, the binaries' names are put back in front of their blocks. Doc-tests come
 * last and their names (`src/lib.rs - add (line 5)`) say what they are.
 */
export function interleave(stdout: string, stderr: string): string {
  const lines = stdout.split('\n');
  if (lines.some((l) => RUNNING.test(l) || DOCTESTS.test(l))) return stdout;
  const headers = stderr.split('\n').filter((l) => RUNNING.test(l));
  // cargo -q prints no names at all: the targets stay unknown.
  const sawHeaders = headers.length > 0;
  const out: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    if (BLOCK.test(lines[i]!)) {
      const first = lines.slice(i + 1, i + 50).find((l) => l.startsWith('test '));
      const doc =
        first !== undefined &&
        DOCTEST_NAME.test(
          first
            .slice(5)
            .replace(/ \.\.\. .*$/, '')
            .replace(KIND, ''),
        );
      // Doc-tests run after every other binary: a block past the last name is one of them.
      out.push(doc ? '   Doc-tests ?' : (headers.shift() ?? (sawHeaders ? '   Doc-tests ?' : '     Running ?')));
    }
    out.push(lines[i]!);
  }
  return out.join('\n');
}

function testLine(line: string): { name: string; rest: string } | undefined {
  // At the start of a line, or after output a test printed with no newline.
  const m = /^test (\S.*?) \.\.\. ?(.*)$/.exec(line) ?? /^.*test (\S.*?) \.\.\. ?(.*)$/.exec(line);
  return m ? { name: m[1]!.replace(KIND, ''), rest: m[2]! } : undefined;
}

function readBlocks(text: string): Block[] {
  const blocks: Block[] = [];
  let target = '?';
  let stem = '';
  let block: Block | undefined;
  // After a block's tests: `failures:` with each failure's output, then `failures:` with the names.
  let section: 'tests' | 'details' | 'list' = 'tests';
  let detailsOf: string | undefined;
  for (const raw of text.split('\n')) {
    const line = raw.trimEnd();
    const run = RUNNING.exec(line);
    const doc = DOCTESTS.exec(line);
    if (run || doc) {
      block = undefined;
      if (doc) [target, stem] = ['doc', doc[1]!];
      else if (!run![3]) target = stem = stemOf(run![2]!);
      else [target, stem] = [run![1] && run![2] === 'src/lib.rs' ? 'lib' : run![2]!, stemOf(run![3])];
      continue;
    }
    if (BLOCK.test(line)) {
      block = { target, stem, tests: new Map(), failures: new Set(), pending: [], done: false, summaryPassed: 0, seen: 0, tail: [] };
      blocks.push(block);
      [section, detailsOf] = ['tests', undefined];
      continue;
    }
    if (!block || block.done) continue;
    const sum = SUMMARY.exec(line);
    if (sum) {
      block.done = true;
      block.summaryPassed = Number(sum[2]);
    } else if (line === 'failures:') {
      section = section === 'tests' ? 'details' : 'list';
    } else if (section === 'details') {
      const head = /^---- (.+?) stdout ----$/.exec(line);
      if (head) detailsOf = head[1]!;
      else if (detailsOf && line) entry(block, detailsOf).lines.push(line);
    } else if (section === 'list') {
      if (/^ {4}\S/.test(line)) block.failures.add(line.trim().replace(KIND, ''));
    } else readTestLine(block, line);
  }
  return blocks;
}

function entry(b: Block, name: string): { status?: TestStatus; lines: string[] } {
  let e = b.tests.get(name);
  if (!e) b.tests.set(name, (e = { lines: [] }));
  return e;
}

function readTestLine(block: Block, line: string): void {
  const t = testLine(line);
  const last = block.pending[block.pending.length - 1];
  if (t && !block.tests.get(t.name)?.status) {
    block.seen++;
    const e = entry(block, t.name);
    if (WORD.test(t.rest)) e.status = statusOf(t.rest);
    else {
      block.pending.push(t.name);
      if (t.rest) e.lines.push(t.rest);
    }
  } else if (WORD.test(line) && last) {
    // The verdict of a test whose output (--nocapture) came between its name and its verdict.
    entry(block, block.pending.pop()!).status = statusOf(line);
  } else {
    if (last && line) entry(block, last).lines.push(line);
    block.tail.push(line);
  }
}

/** Doc-test names carry line numbers, which any edit above them shifts: they are dropped. */
function docNames(names: string[]): Map<string, string> {
  const parsed = names.map((n) => ({ n, m: DOCTEST_NAME.exec(n) }));
  const out = new Map<string, string>();
  const byItem = new Map<string, { n: string; line: number }[]>();
  for (const { n, m } of parsed) {
    if (!m) out.set(n, n);
    else (byItem.get(m[1]!) ?? byItem.set(m[1]!, []).get(m[1]!)!).push({ n, line: Number(m[2]) });
  }
  for (const [item, list] of byItem) {
    list.sort((a, b) => a.line - b.line);
    list.forEach((x, i) => out.set(x.n, i === 0 ? item : `${item} #${i + 1}`));
  }
  return out;
}

function blockCases(b: Block): (TestCase & { stem: string })[] {
  const out: (TestCase & { stem: string })[] = [];
  for (const f of b.failures) if (!b.tests.has(f)) b.tests.set(f, { lines: [] });
  const names = b.target === 'doc' ? docNames([...b.tests.keys()]) : undefined;
  for (const [name, t] of b.tests) {
    // A verdict lost in printed output: the failures list is the truth; without it, the summary.
    const status = b.failures.has(name) ? 'failed' : (t.status ?? (b.done ? 'passed' : 'failed'));
    const clean = names?.get(name) ?? name;
    const message =
      status === 'failed'
        ? (firstLines(t.lines.join('\n')) ?? (b.done ? undefined : 'the test binary exited before this test finished'))
        : undefined;
    out.push({ id: `${b.target}::${clean}`, status, stem: b.stem, ...(message ? { message } : {}) });
  }
  if (!b.done) {
    const why = b.tail.filter((l) => /process didn't exit successfully|signal:|error:/.test(l));
    out.push({
      id: b.target,
      status: 'error',
      stem: b.stem,
      message: firstLines(why.join('\n')) ?? 'the test binary exited before its summary',
    });
  }
  return out;
}

/** `error: could not compile `calc` (lib test)`: one broken entry per target that did not build. */
function compileErrors(text: string): TestCase[] {
  const lines = text.split('\n');
  const first = lines.findIndex((l) => /^error(\[E\d+\])?: /.test(l) && !l.startsWith('error: could not compile'));
  const message = first >= 0 ? firstLines(lines.slice(first, first + 6).join('\n')) : undefined;
  const out: TestCase[] = [];
  for (const m of text.matchAll(/^error: could not compile `([^`]+)`(?: \(([^)]+)\))?/gm)) {
    out.push({ id: `build::${m[1]}${m[2] ? ` (${m[2]})` : ''}`, status: 'error', ...(message ? { message } : {}) });
  }
  return out;
}

/** Ids are `<target>::<test path>`: `lib::tests::adds`, `tests/it.rs::adds`, `doc::src/lib.rs - add`. */
export function parseCargoOutput(stdout: string, stderr: string): { tests: TestCase[]; terse: boolean } {
  const blocks = readBlocks(interleave(stdout, stderr));
  const cases = blocks.flatMap(blockCases);
  // Two packages of a workspace both have `lib::tests::it_works`: those ids get the crate.
  const stems = new Map<string, Set<string>>();
  for (const c of cases) (stems.get(c.id) ?? stems.set(c.id, new Set()).get(c.id)!).add(c.stem);
  const tests = cases.map(({ stem, ...c }) => {
    if (stems.get(c.id)!.size < 2) return c;
    const [target, ...rest] = c.id.split('::');
    return { ...c, id: [`${target}[${stem}]`, ...rest].join('::') };
  });
  tests.push(...compileErrors(`${stdout}\n${stderr}`));
  const terse = blocks.some((b) => b.summaryPassed > 0 && b.seen === 0);
  return { tests: mergeRepeats(tests), terse };
}

// `cargo test`, maybe after variable assignments (`X=1 cargo test`).
const CARGO_TEST = /^(\s*(?:[A-Za-z_]\w*=\S*\s+)*cargo\s+test)(?=\s|$)/;

/** A lone `cargo test …` with no shell around it: flags can be added to it safely. */
function isPlainCargoTest(command: string): boolean {
  const unquoted = command.replace(/'[^']*'|"(?:[^"\\]|\\.)*"/g, '');
  return CARGO_TEST.test(command) && !/[;&|<>`$()\n\\]/.test(unquoted);
}

export const cargoAdapter: RunnerAdapter = {
  runner: 'cargo',
  infrastructure: ['Cargo.toml', 'Cargo.lock', 'build.rs', '.cargo/config', '.cargo/config.toml', 'rust-toolchain', 'rust-toolchain.toml'],
  prepare(ctx) {
    // Without it, the first failing test binary stops cargo and the later ones report nothing.
    let command =
      isPlainCargoTest(ctx.command) && !/\s--no-fail-fast(\s|$)/.test(ctx.command)
        ? ctx.command.replace(CARGO_TEST, '$1 --no-fail-fast')
        : ctx.command;
    // cargo names each test binary on stderr, libtest reports on stdout: one stream keeps the order.
    command = `{ ${command}\n} 2>&1`;
    return { command, env: {} };
  },
  parse(input) {
    const { tests, terse } = parseCargoOutput(input.stdout, input.stderr);
    let note: string | undefined;
    if (terse) note = 'libtest printed no per-test lines (cargo test -q?): drop -q from test.command';
    else if (!tests.length) {
      const err = `${input.stdout}\n${input.stderr}`.split('\n').find((l) => l.startsWith('error'));
      if (err) note = `cargo: ${err}`;
    }
    return { source: 'stdout', tests, counts: countTests(tests), ...(note ? { note } : {}) };
  },
};
