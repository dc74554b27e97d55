import { describe, expect, it } from 'vitest';
import { cargoAdapter, interleave, parseCargoOutput } from '../../harness/results/cargo.js';
import { capturedInput, statuses } from '../helpers/captured.js';

// Captured by test/helpers/capture-runner-output.sh (cargo and rustc in test/data/versions.txt):
// the crate `calc` run as the adapter prepares `cargo test` (stderr merged into stdout), with
// --nocapture on one thread, with the streams apart, with -q; a crate whose test binary aborts,
// one that does not compile, and a workspace of two packages.
const input = (dir: string) => capturedInput(dir, '/WORK/cargo');

const prepare = (command: string) => cargoAdapter.prepare({ command, workdir: '/w', scratchDir: '/s', env: {} });

const EXPECTED = {
  'lib::tests::adds': 'failed',
  'lib::tests::zero': 'passed',
  'lib::tests::skipped': 'skipped',
  'lib::tests::bad_bytes': 'failed',
  'lib::tests::nested::deep': 'passed',
  // libtest prints it as "tests::panics_as_expected - should panic".
  'lib::tests::panics_as_expected': 'passed',
  'tests/it.rs::integration_adds': 'failed',
  'tests/it.rs::integration_doubles': 'passed',
  // Doc-tests without their line numbers, which any edit above them would shift.
  'doc::src/lib.rs - add': 'failed',
  'doc::src/lib.rs - double': 'passed',
  'doc::src/lib.rs - double #2': 'passed',
};

describe('cargo adapter: prepare', () => {
  it('merges stderr into stdout, so each test binary name stays in front of its results', () => {
    expect(prepare('cd crate && cargo test')).toEqual({ command: '{ cd crate && cargo test\n} 2>&1', env: {} });
  });

  it('adds --no-fail-fast to a plain cargo test, so one failing binary does not hide the others', () => {
    expect(prepare('cargo test').command).toBe('{ cargo test --no-fail-fast\n} 2>&1');
    expect(prepare('cargo test --offline -- --nocapture').command).toBe('{ cargo test --no-fail-fast --offline -- --nocapture\n} 2>&1');
    expect(prepare('cargo test --no-fail-fast').command).toBe('{ cargo test --no-fail-fast\n} 2>&1');
    expect(prepare('RUST_TEST_THREADS=1 cargo test').command).toBe('{ RUST_TEST_THREADS=1 cargo test --no-fail-fast\n} 2>&1');
  });

  it('protects the manifest, lockfile, build script and toolchain files', () => {
    expect(cargoAdapter.infrastructure).toEqual([
      'Cargo.toml',
      'Cargo.lock',
      'build.rs',
      '.cargo/config',
      '.cargo/config.toml',
      'rust-toolchain',
      'rust-toolchain.toml',
    ]);
  });
});

describe('cargo adapter: parse', () => {
  it('reads every test binary: unit tests, an integration test and doc-tests', async () => {
    const report = cargoAdapter.parse(await input('cargo'));
    expect(report.source).toBe('stdout');
    expect(report.note).toBeUndefined();
    expect(statuses(report.tests)).toEqual(EXPECTED);
    expect(report.counts).toEqual({ passed: 6, failed: 4, errors: 0, skipped: 1, total: 11 });
  });

  it('never puts the binary hash in an id', async () => {
    const i = await input('cargo');
    expect(i.stdout).toMatch(/Running unittests src\/lib\.rs \(target\/debug\/deps\/calc-[0-9a-f]{16}\)/);
    expect(
      cargoAdapter
        .parse(i)
        .tests.map((t) => t.id)
        .join(),
    ).not.toMatch(/[0-9a-f]{16}/);
  });

  it("keeps a failing test's panic as its message", async () => {
    const byId = new Map(cargoAdapter.parse(await input('cargo')).tests.map((t) => [t.id, t.message]));
    expect(byId.get('lib::tests::adds')).toMatch(
      /^thread 'tests::adds' \(\d+\) panicked at src\/lib\.rs:32:9:\nassertion `left == right` failed\n {2}left: -1\n right: 5/,
    );
    expect(byId.get('doc::src/lib.rs - add')).toMatch(/^Test executable failed \(exit status: 101\)\.\nstderr:\nthread 'main'/);
    expect(byId.get('lib::tests::zero')).toBeUndefined();
  });

  it('finds verdicts that printed output (--nocapture) pushed away from their test names', async () => {
    const i = await input('cargo-nocapture');
    expect(i.stdout).toContain('test tests::bad_bytes ... caf\uFFFD is not utf-8\n'); // a raw 0xE9 byte, decoded
    expect(i.stdout).toContain('test integration_doubles ... no newlineok\n');
    const report = cargoAdapter.parse(i);
    expect(statuses(report.tests)).toEqual(EXPECTED);
    const byId = new Map(report.tests.map((t) => [t.id, t.message]));
    expect(byId.get('lib::tests::bad_bytes')).toMatch(
      /^caf\uFFFD is not utf-8\nthread 'tests::bad_bytes' \(\d+\) panicked at src\/lib\.rs:48:9:\nprinted a latin-1 byte$/,
    );
  });

  it('puts the binary names back when the streams were kept apart', async () => {
    const i = await input('cargo-separate');
    expect(i.stdout).not.toContain('Running');
    expect(i.stderr).toContain('Running tests/it.rs');
    expect(interleave(i.stdout, i.stderr)).toMatch(/Running unittests src\/lib\.rs [^\n]*\nrunning 6 tests/);
    expect(statuses(cargoAdapter.parse(i).tests)).toEqual(EXPECTED);
  });

  it('tells the packages of a workspace apart, and reads both doc-test blocks of edition 2024', async () => {
    const i = await input('cargo-workspace');
    expect(i.stdout.match(/Doc-tests a\n\nrunning 1 test\n[^]*?\n\nrunning 1 test\n/)).not.toBeNull();
    expect(statuses(cargoAdapter.parse(i).tests)).toEqual({
      'lib[a]::tests::t': 'passed',
      'lib[b]::tests::t': 'passed',
      'src/bin/tool.rs::in_bin': 'passed',
      'tests/it.rs::it': 'passed',
      'doc::a/src/lib.rs - f': 'passed',
      'doc::a/src/lib.rs - g': 'passed', // compile_fail, run in a block of its own
      'doc::b/src/lib.rs - f': 'passed',
    });
  });

  it('reports a compile error as broken entries, so the phase is not "no tests"', async () => {
    const report = cargoAdapter.parse(await input('cargo-compile-error'));
    expect(statuses(report.tests)).toEqual({ 'build::typo (lib test)': 'error', 'build::typo (lib)': 'error' });
    expect(report.tests[0]!.message).toMatch(/^error\[E0369\]: cannot divide `&str` by `\{integer\}`\n --> src\/lib\.rs:2:9/);
  });

  it('reports a test binary that died before its summary as a broken entry with the signal', async () => {
    const report = cargoAdapter.parse(await input('cargo-crash'));
    expect(statuses(report.tests)).toEqual({ 'lib::fine': 'passed', lib: 'error' });
    expect(report.tests[1]!.message).toMatch(/process didn't exit successfully: .*\(signal: 6, SIGABRT: process abort signal\)/);
  });

  it('notes the terse output of cargo test -q, which lists failures only', async () => {
    const report = cargoAdapter.parse(await input('cargo-quiet'));
    expect(report.note).toBe('libtest printed no per-test lines (cargo test -q?): drop -q from test.command');
    expect(report.counts).toMatchObject({ passed: 0, failed: 4 });
  });

  it('reads the binary names of cargo before 1.58 and a verdict lost in output (the failures list decides)', () => {
    const text = [
      '     Running target/debug/deps/calc-0123456789abcdef',
      '',
      'running 2 tests',
      'test a ... ',
      'boom',
      'FAILED',
      'test b ... printed with no newlineok',
      '',
      'failures:',
      '',
      'failures:',
      '    a',
      '',
      'test result: FAILED. 1 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s',
    ].join('\n');
    expect(parseCargoOutput(text, '').tests).toEqual([
      { id: 'calc::a', status: 'failed', message: 'boom' },
      { id: 'calc::b', status: 'passed' },
    ]);
  });

  it('says what cargo said when nothing ran at all', () => {
    const report = cargoAdapter.parse({
      report: null,
      stdout: '',
      stderr: 'error: could not find `Cargo.toml` in `/w` or any parent directory\n',
      exitCode: 101,
      workdir: '/w',
    });
    expect(report).toMatchObject({ tests: [], note: 'cargo: error: could not find `Cargo.toml` in `/w` or any parent directory' });
  });
});
