import { describe, expect, test } from 'vitest';
import { checkPhase } from '../../harness/results/check.js';
import { NODE_REPORT_END, ownLines } from '../../harness/results/node-reporter.js';
import { nodeTestAdapter } from '../../harness/results/node-test.js';
import { pluginDisagreements, pluginRecord, PYTEST_PLUGIN_MODULE } from '../../harness/results/pytest-plugin.js';
import { pytestAdapter } from '../../harness/results/pytest.js';
import { secondSignal } from '../../harness/results/signals.js';
import { countTests, type TestCase } from '../../harness/results/types.js';

const pass = (id: string): TestCase => ({ id, status: 'passed' });
const report = (tests: TestCase[]) => ({ source: 'junit' as const, tests, counts: countTests(tests) });

/** A JUnit XML as pytest writes it, with the plugin's record as a global property (escaped as XML). */
function junit(cases: string, record?: Record<string, unknown>): string {
  const prop = record
    ? `<properties><property name="redgreen" value="${JSON.stringify(record).replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;')}" /></properties>`
    : '';
  return `<?xml version="1.0" encoding="utf-8"?><testsuites name="pytest tests"><testsuite name="pytest" tests="2">${prop}${cases}</testsuite></testsuites>`;
}
const CASES =
  '<testcase classname="test_calc" name="test_add" file="test_calc.py" /><testcase classname="test_calc" name="test_zero" file="test_calc.py" />';
const honest = {
  v: 1,
  exitstatus: 0,
  tests: { 'test_calc.py::test_add': 'passed', 'test_calc.py::test_zero': 'passed' },
  forged: [],
  replaced: [],
};
const both = [pass('test_calc.py::test_add'), pass('test_calc.py::test_zero')];

describe('checkPhase with a second signal', () => {
  test('a disagreement makes the phase broken whatever its tests say, and is named', () => {
    expect(checkPhase(report(both), 0, false, ['the report was rewritten'])).toEqual({
      state: 'broken',
      problems: ['the report was rewritten'],
    });
    expect(checkPhase(report(both), 0, false, [])).toEqual({ state: 'pass', problems: [] });
  });
});

describe("pytest: the harness plugin's record against the JUnit XML", () => {
  test('reads the record back from the property, entities and all', () => {
    expect(pluginRecord(junit(CASES, honest))).toEqual(honest);
    expect(pluginRecord(junit(CASES))).toBeNull();
    expect(pluginRecord('not xml <')).toBeNull();
  });

  test('an honest run agrees', () => {
    expect(pluginDisagreements(junit(CASES, honest), both)).toEqual([]);
  });

  test('a report without the record, or no report at all while tests were read from the output, is doubted', () => {
    expect(pluginDisagreements(junit(CASES), both)).toEqual([
      "the JUnit XML lacks the harness's pytest plugin record: it was not written by pytest's own run",
    ]);
    expect(pluginDisagreements(null, both)).toEqual([
      "pytest's run ended before the harness's pytest plugin could record it (no JUnit XML)",
    ]);
    expect(pluginDisagreements(null, [])).toEqual([]);
  });

  test('replaced internals, raised-but-passed tests, passes the plugin saw fail or never saw, and a failed session are each named', () => {
    const record = {
      v: 1,
      exitstatus: 1,
      tests: { 'test_calc.py::test_add': 'failed' },
      forged: ['test_calc.py::test_add'],
      replaced: ['_pytest.reports.TestReport.from_item_and_call'],
    };
    expect(pluginDisagreements(junit(CASES, record), both)).toEqual([
      'pytest internals were replaced during the run: _pytest.reports.TestReport.from_item_and_call',
      'tests that raised were reported as passing: test_calc.py::test_add',
      "the JUnit XML says passed where the harness's pytest plugin saw a failure: test_calc.py::test_add",
      "the JUnit XML has passing tests the harness's pytest plugin never saw run: test_calc.py::test_zero",
      'pytest ended its session with "tests failed", but the report has no failing test',
    ]);
  });

  test('only when the plugin was loaded', () => {
    const input = { report: junit(CASES), stdout: '', stderr: '', exitCode: 0, workdir: '/w' };
    const withPlugin = pytestAdapter.prepare({ command: 'pytest', workdir: '/w', scratchDir: '/s', env: {} });
    const without = pytestAdapter.prepare({ command: 'PYTHONPATH=. pytest', workdir: '/w', scratchDir: '/s', env: {} });
    expect(withPlugin.env.PYTEST_ADDOPTS).toContain(`-p ${PYTEST_PLUGIN_MODULE}`);
    expect(secondSignal('pytest', withPlugin, input, report(both))).toHaveLength(1);
    expect(secondSignal('pytest', without, input, report(both))).toEqual([]);
  });
});

describe('node:test: the reporter signs its lines and counts them', () => {
  const line = (n: string, name: string, status = 'passed') =>
    JSON.stringify({ n, file: '/w/t.test.js', path: [name], type: 'test', status });
  const end = (n: string, lines: number) => JSON.stringify({ n, type: NODE_REPORT_END, lines });
  const prepared = nodeTestAdapter.prepare({ command: 'node --test', workdir: '/w', scratchDir: '/s', env: {} });
  const check = (jsonl: string) => {
    const input = { report: jsonl, stdout: '', stderr: '', exitCode: 0, workdir: '/w' };
    const parsed = nodeTestAdapter.parse(input);
    return { tests: parsed.tests.map((t) => `${t.id}=${t.status}`), problems: secondSignal('node-test', prepared, input, parsed) };
  };

  test('its own lines are read; an honest report agrees', () => {
    expect(check([line('k', 'a'), line('k', 'b', 'failed'), end('k', 2)].join('\n'))).toEqual({
      tests: ['t.test.js::a=passed', 't.test.js::b=failed'],
      problems: [],
    });
  });

  test('lines written by someone else are ignored and named', () => {
    const jsonl = [
      line('k', 'b', 'failed'),
      end('k', 1),
      ' '.repeat(100),
      line('forged', 'b'),
      JSON.stringify({ path: ['c'], status: 'passed' }),
    ].join('\n');
    expect(ownLines(jsonl)).toMatchObject({ foreign: 2, end: { lines: 1 } });
    expect(check(jsonl)).toEqual({
      tests: ['t.test.js::b=failed'],
      problems: ["2 line(s) of the node:test report were not written by the harness's reporter"],
    });
  });

  test('a report without its last line, or with lines missing, is doubted', () => {
    expect(check(line('k', 'a')).problems).toEqual([
      "the harness's node:test reporter never finished its report: the run ended early, or the file was rewritten",
    ]);
    expect(check([line('k', 'a'), end('k', 3)].join('\n')).problems).toEqual([
      "the harness's node:test reporter wrote 3 line(s), the report holds 1 of them",
    ]);
  });
});
