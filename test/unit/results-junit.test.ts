import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { parseJUnitDocument } from '../../harness/results/junit.js';
import { junitAdapter, parseJUnitReport } from '../../harness/results/junit-runner.js';
import type { ParseInput } from '../../harness/results/types.js';

// test/data/junit-*/report.xml, written by test/helpers/capture-runner-output.sh: node's and
// vitest's JUnit reporters run for real; Surefire, go-junit-report and jest-junit written by hand
// in their documented formats (each folder's origin.txt says which).
const data = (f: string) => readFile(new URL(`../data/${f}`, import.meta.url), 'utf8');
const input = (report: string | null): ParseInput => ({ report, stdout: '', stderr: '', exitCode: 1, workdir: '/w' });
const statuses = (tests: { id: string; status: string }[]) => Object.fromEntries(tests.map((t) => [t.id, t.status]));
const parseFile = async (dir: string) => junitAdapter.parse(input(await data(`${dir}/report.xml`)));

describe('junit adapter: prepare', () => {
  it("points the pipeline at the manifest's test.reportPath, in the workspace, and runs the command as given", () => {
    expect(
      junitAdapter.prepare({ command: 'mvn -q test', workdir: '/sb/workspace', scratchDir: '/s', env: {}, reportPath: 'target/junit.xml' }),
    ).toEqual({
      command: 'mvn -q test',
      env: {},
      reportFile: '/sb/workspace/target/junit.xml',
    });
    expect(
      junitAdapter.prepare({ command: 'make test', workdir: '/sb/workspace', scratchDir: '/s', env: {}, reportPath: './out/../junit.xml' })
        .reportFile,
    ).toBe('/sb/workspace/junit.xml');
    expect(junitAdapter.infrastructure).toEqual([]);
  });
});

describe('junit adapter: dialects', () => {
  it('Surefire: classname::name, nested classes, parameterised names, reruns', async () => {
    const report = await parseFile('junit-surefire');
    expect(report.source).toBe('junit');
    expect(statuses(report.tests)).toEqual({
      'com.example.CalcTest::adds': 'passed',
      'com.example.CalcTest::subtracts': 'failed',
      'com.example.CalcTest::[1] 2, 4': 'passed',
      'com.example.CalcTest::[2] 3, 7': 'failed', // failed again on every rerun
      'com.example.CalcTest$Division::divides': 'skipped',
      'com.example.CalcTest$Division::loadsRates': 'error',
      'com.example.CalcTest::retries': 'passed', // passed on a rerun: flakyFailure only
    });
    const byId = new Map(report.tests.map((t) => [t.id, t]));
    expect(byId.get('com.example.CalcTest::subtracts')).toEqual({
      id: 'com.example.CalcTest::subtracts',
      status: 'failed',
      durationMs: 12,
      message: 'expected: <1> but was: <5>',
    });
    expect(byId.get('com.example.CalcTest$Division::loadsRates')?.message).toBe('Connection refused');
  });

  it('go-junit-report: package::Test/sub, and a package that did not build', async () => {
    const report = await parseFile('junit-go');
    expect(statuses(report.tests)).toEqual({
      'example.com/shop/calc::TestAdd': 'failed',
      'example.com/shop/calc::TestTable': 'failed',
      'example.com/shop/calc::TestTable/zero': 'passed',
      'example.com/shop/calc::TestTable/two_plus_three': 'failed',
      'example.com/shop/calc::TestSkip': 'skipped',
      'example.com/shop/broken::[build failed]': 'error',
    });
    expect(report.counts).toEqual({ passed: 1, failed: 3, errors: 1, skipped: 1, total: 6 });
  });

  it('jest-junit: trimmed names, a file that failed to run, and a suite failing outside its tests', async () => {
    const report = await parseFile('junit-jest');
    expect(statuses(report.tests)).toEqual({
      'addition positive numbers should add up::addition positive numbers should add up': 'passed',
      'addition negative numbers should add up::addition negative numbers should add up': 'failed',
      'addition later::addition later': 'skipped',
      'top level::top level': 'passed',
      'Test suite failed to run::__tests__/broken.test.js': 'error',
      'hooks reads::hooks reads': 'passed',
      // failures="1" but its only case passed (an afterAll hook): one broken entry for the suite.
      hooks: 'error',
    });
    const byId = new Map(report.tests.map((t) => [t.id, t.message]));
    expect(byId.get('hooks')).toBe('the suite reports 1 failure outside its test cases');
    expect(byId.get('addition negative numbers should add up::addition negative numbers should add up')).toBe(
      'Error: expect(received).toBe(expected) // Object.is equality\n\nExpected: -3\nReceived: 1\n    at Object.toBe (/home/ci/app/__tests__/addition.test.js:9:22)',
    );
  });

  it("node's reporter: nested suites tell apart same-named tests its constant classname does not", async () => {
    const xml = await data('junit-node/report.xml');
    expect(xml).toMatch(/<testsuite name="cart"[^>]*>[^]*<testsuite name="discounts"/);
    expect(statuses(junitAdapter.parse(input(xml)).tests)).toEqual({
      'test::cart > adds': 'passed',
      'test::cart > discounts > adds': 'passed',
      'test::totals': 'failed',
      'test::stacks': 'skipped',
      'test::top level': 'passed',
    });
  });

  it("vitest's reporter: file::describe > test", async () => {
    const report = await parseFile('junit-vitest');
    expect(statuses(report.tests)).toEqual({
      'src/math.test.ts::math > add > adds': 'passed',
      'src/math.test.ts::math > add > doubles 1': 'passed',
      'src/math.test.ts::math > add > doubles 2': 'failed',
      'src/math.test.ts::math > skipped': 'skipped',
    });
    expect(report.tests.find((t) => t.status === 'failed')?.message).toBe('expected 4 to be 5 // Object.is equality');
  });
});

describe('junit adapter: ids and edge cases', () => {
  it('names a case with no classname by its suite path', () => {
    const xml =
      '<testsuites><testsuite name="Root Suite"><testsuite name="cart"><testcase name="adds" classname=""/></testsuite></testsuite></testsuites>';
    expect(parseJUnitReport(xml)).toEqual([{ id: 'Root Suite > cart > adds', status: 'passed' }]);
  });

  it('keeps every case of an id listed twice under the same suite, numbered: a failing one is never hidden', () => {
    const xml =
      '<testsuite name="s"><testcase classname="k" name="t"><failure message="first"/></testcase><testcase classname="k" name="t"/></testsuite>';
    expect(parseJUnitReport(xml)).toEqual([
      { id: 'k::t', status: 'failed', message: 'first' },
      { id: 'k::t [2]', status: 'passed' },
    ]);
  });

  it('reports a <failure> placed on a suite itself (a hook) as a broken entry', () => {
    const xml =
      '<testsuites><testsuite name="db" failures="1"><testcase classname="db" name="reads"/><error message="afterAll failed"/></testsuite></testsuites>';
    expect(parseJUnitReport(xml)).toEqual([
      { id: 'db::reads', status: 'passed' },
      { id: 'db', status: 'error', message: 'afterAll failed' },
    ]);
  });

  it('names only the innermost suite whose declared failures its cases do not show', () => {
    const xml =
      '<testsuites><testsuite name="a" failures="1"><testsuite name="b" failures="1"><testcase classname="k" name="t"/></testsuite></testsuite></testsuites>';
    expect(statuses(parseJUnitReport(xml))).toEqual({ 'k::t': 'passed', 'a > b': 'error' });
    expect(parseJUnitDocument(xml).suites).toEqual([
      { path: ['a'], declared: 1, failing: 0 },
      { path: ['a', 'b'], parent: 0, declared: 1, failing: 0 },
    ]);
  });

  it('reads a report with bytes that are not UTF-8 (a latin-1 report, decoded as the pipeline does)', () => {
    const bytes = Buffer.concat([
      Buffer.from('<?xml version="1.0" encoding="ISO-8859-1"?><testsuite name="s"><testcase classname="k" name="caf'),
      Buffer.from([0xe9]),
      Buffer.from('"><failure message="r'),
      Buffer.from([0xe9]),
      Buffer.from('sum'),
      Buffer.from('"/></testcase></testsuite>'),
    ]);
    expect(junitAdapter.parse(input(bytes.toString('utf8'))).tests).toEqual([
      { id: 'k::caf\uFFFD', status: 'failed', message: 'r\uFFFDsum' },
    ]);
  });

  it('says why when the report is missing, unreadable or empty', () => {
    expect(junitAdapter.parse(input(null))).toMatchObject({
      source: 'none',
      tests: [],
      note: 'the command left no JUnit XML at test.reportPath',
    });
    expect(junitAdapter.parse(input('<testsuites><testsuite'))).toMatchObject({
      source: 'none',
      note: expect.stringMatching(/^unreadable JUnit XML: /),
    });
    expect(junitAdapter.parse(input('<testsuites name="none"/>'))).toMatchObject({
      source: 'junit',
      tests: [],
      note: 'the JUnit XML at test.reportPath has no <testcase>',
    });
  });
});
