import { describe, expect, it } from 'vitest';
import { goAdapter, parseGoOutput } from '../../harness/results/go.js';
import { capturedInput, statuses } from '../helpers/captured.js';

// Captured by test/helpers/capture-runner-output.sh with Go 1.19 (test/data/versions.txt): the
// module example.com/shop run as the adapter prepares it (`go test -json ./...`), the same module
// through a wrapped command (GOFLAGS=-v, read as text), and a module whose import is missing.
const input = (dir: string) => capturedInput(dir, '/WORK/go');

const prepare = (command: string, env: Record<string, string> = {}) => goAdapter.prepare({ command, workdir: '/w', scratchDir: '/s', env });

const EXPECTED = {
  'example.com/shop/calc::TestAdd': 'failed',
  'example.com/shop/calc::TestZero': 'passed',
  // A parent fails with its subtest; subtest names are go's own (spaces become "_").
  'example.com/shop/calc::TestTable': 'failed',
  'example.com/shop/calc::TestTable/zero': 'passed',
  'example.com/shop/calc::TestTable/two_plus_three': 'failed',
  'example.com/shop/calc::TestTable/neg/one': 'passed',
  'example.com/shop/calc::TestNested': 'passed',
  'example.com/shop/calc::TestNested/outer': 'passed',
  'example.com/shop/calc::TestNested/outer/inner': 'passed',
  'example.com/shop/calc::TestSkip': 'skipped',
  'example.com/shop/calc::TestBytes': 'failed',
  'example.com/shop/calc::TestParallel': 'passed',
  'example.com/shop/calc::TestParallel/a': 'passed',
  'example.com/shop/calc::TestParallel/b': 'passed',
  'example.com/shop/mainfail::TestFine': 'passed',
  // TestMain exited 1 after every test passed: the package itself is the broken entry.
  'example.com/shop/mainfail': 'error',
  'example.com/shop/panics::TestBefore': 'passed',
  'example.com/shop/panics::TestPanics': 'failed',
  // Did not compile: one entry named after the package, so the phase is not "no tests".
  'example.com/shop/broken': 'error',
};

describe('go adapter: prepare', () => {
  it('adds -json to a plain go test invocation, before any -args', () => {
    expect(prepare('go test ./...')).toEqual({ command: 'go test -json ./...', env: {} });
    expect(prepare('go test -run TestAdd ./... -args -db=x')).toEqual({
      command: 'go test -run TestAdd ./... -args -db=x',
      env: { GOFLAGS: '-v' },
    });
    expect(prepare("go test -run 'TestA|TestB' ./...").command).toBe("go test -json -run 'TestA|TestB' ./...");
    expect(prepare('CGO_ENABLED=0 go test ./...').command).toBe('CGO_ENABLED=0 go test -json ./...');
  });

  it('leaves a command that already asks for -json alone', () => {
    expect(prepare('cd svc && go test -json ./...')).toEqual({ command: 'cd svc && go test -json ./...', env: {} });
  });

  it('reaches a wrapped go test through GOFLAGS=-v, keeping the manifest GOFLAGS', () => {
    expect(prepare('cd svc && go test ./...')).toEqual({ command: 'cd svc && go test ./...', env: { GOFLAGS: '-v' } });
    expect(prepare('make test', { GOFLAGS: '-mod=vendor' })).toEqual({ command: 'make test', env: { GOFLAGS: '-mod=vendor -v' } });
  });

  it('protects the module files, not the tests (those are the manifest protected globs)', () => {
    expect(goAdapter.infrastructure).toEqual(['go.mod', 'go.sum', 'go.work', 'go.work.sum']);
  });
});

describe('go adapter: parse', () => {
  it('reads go test -json: packages, subtests, skips, a panic, TestMain and a build failure', async () => {
    const report = goAdapter.parse(await input('go'));
    expect(report.source).toBe('json');
    expect(report.note).toBeUndefined();
    expect(statuses(report.tests)).toEqual(EXPECTED);
    expect(report.counts).toEqual({ passed: 11, failed: 5, errors: 2, skipped: 1, total: 19 });
  });

  it('recovers results that test2json of Go 1.19 lost after output with no newline', async () => {
    const { stdout } = await input('go');
    // The captured run has no pass event for them: their lines ran into printed text.
    expect(stdout).toContain('"Output":"no newline from b--- PASS: TestParallel (0.00s)\\n"');
    expect(stdout).not.toMatch(/"Action":"pass","Package":"example.com\/shop\/calc","Test":"TestParallel/);
    const byId = statuses(parseGoOutput(stdout, '').tests);
    expect([byId['example.com/shop/calc::TestParallel/a'], byId['example.com/shop/calc::TestParallel/b']]).toEqual(['passed', 'passed']);
  });

  it('keeps what a failing test printed as its message, t.Log and non-UTF-8 bytes included', async () => {
    const byId = new Map(goAdapter.parse(await input('go')).tests.map((t) => [t.id, t.message]));
    expect(byId.get('example.com/shop/calc::TestAdd')).toBe('calc_test.go:11: Add(2, 3) = -1, want 5');
    expect(byId.get('example.com/shop/calc::TestTable/two_plus_three')).toBe('calc_test.go:31: got -1, want 5');
    expect(byId.get('example.com/shop/calc::TestBytes')).toBe('caf\uFFFD is not utf-8\ncalc_test.go:47: printed a latin-1 byte');
    expect(byId.get('example.com/shop/panics::TestPanics')).toMatch(/^panic: assignment to entry in nil map \[recovered\]\n/);
    expect(byId.get('example.com/shop/mainfail')).toBe('the database was left open');
    expect(byId.get('example.com/shop/calc::TestZero')).toBeUndefined();
  });

  it("names a package that did not build with the compiler's message from stderr", async () => {
    const i = await input('go');
    expect(i.stdout).toContain('FAIL\texample.com/shop/broken [build failed]'); // a plain line among the events
    const broken = goAdapter.parse(i).tests.find((t) => t.id === 'example.com/shop/broken');
    expect(broken).toEqual({ id: 'example.com/shop/broken', status: 'error', message: 'broken/broken.go:3:37: undefined: undefinedName' });
  });

  it('reads the same statuses from the verbose text of a wrapped go test', async () => {
    const i = await input('go-verbose');
    expect(i.stdout).toContain('=== RUN   TestBytes\ncaf\uFFFD is not utf-8\n'); // the raw byte, decoded
    const report = goAdapter.parse(i);
    expect(report.source).toBe('stdout');
    expect(statuses(report.tests)).toEqual(EXPECTED);
    const byId = new Map(report.tests.map((t) => [t.id, t.message]));
    expect(byId.get('example.com/shop/calc::TestAdd')).toBe('calc_test.go:11: Add(2, 3) = -1, want 5');
    expect(byId.get('example.com/shop/mainfail')).toBe('the database was left open');
  });

  it('says why when go fails before any package runs (a missing module)', async () => {
    const report = goAdapter.parse(await input('go-nomodule'));
    expect(report.tests).toEqual([]);
    expect(report.note).toBe(
      'go test reported no package: l.go:3:8: no required module provides package example.com/missing; to add it:\n\tgo get example.com/missing',
    );
  });

  it('reads the build events of Go 1.24+ (build-output, FailedBuild)', () => {
    // The shape `go doc cmd/test2json` documents for a package that does not compile.
    const stdout = [
      '{"ImportPath":"example.com/shop/broken [example.com/shop/broken.test]","Action":"build-output","Output":"# example.com/shop/broken [example.com/shop/broken.test]\\n"}',
      '{"ImportPath":"example.com/shop/broken [example.com/shop/broken.test]","Action":"build-output","Output":"broken/broken.go:3:37: undefined: undefinedName\\n"}',
      '{"ImportPath":"example.com/shop/broken [example.com/shop/broken.test]","Action":"build-fail"}',
      '{"Action":"start","Package":"example.com/shop/broken"}',
      '{"Action":"output","Package":"example.com/shop/broken","Output":"FAIL\\texample.com/shop/broken [build failed]\\n"}',
      '{"Action":"fail","Package":"example.com/shop/broken","Elapsed":0,"FailedBuild":"example.com/shop/broken [example.com/shop/broken.test]"}',
    ].join('\n');
    expect(parseGoOutput(stdout, '').tests).toEqual([
      { id: 'example.com/shop/broken', status: 'error', message: 'broken/broken.go:3:37: undefined: undefinedName' },
    ]);
  });

  it('reads the text of go test without -v (failures only) and of a run killed mid-test', () => {
    const plain = '--- FAIL: TestAdd (0.01s)\n    calc_test.go:11: bad sum\nFAIL\nFAIL\texample.com/shop/calc\t0.004s\nFAIL\n';
    expect(parseGoOutput(plain, '').tests).toEqual([
      { id: 'example.com/shop/calc::TestAdd', status: 'failed', durationMs: 10, message: 'calc_test.go:11: bad sum' },
    ]);
    const killed = '=== RUN   TestFast\n--- PASS: TestFast (0.00s)\n=== RUN   TestHang\n';
    expect(parseGoOutput(killed, '').tests).toEqual([
      { id: 'TestFast', status: 'passed', durationMs: 0 },
      { id: 'TestHang', status: 'failed', message: 'the test never finished: the test binary exited' },
    ]);
  });
});
