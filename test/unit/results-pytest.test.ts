import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { parseJUnit } from '../../harness/results/junit.js';
import { PYTEST_PLUGIN_MODULE, PYTEST_PLUGIN_SOURCE } from '../../harness/results/pytest-plugin.js';
import { pytestAdapter, pytestId } from '../../harness/results/pytest.js';
import type { ParseInput } from '../../harness/results/types.js';

// Captured by test/helpers/capture-runner-output.sh (pytest run with the adapter's PYTEST_ADDOPTS).
const data = (f: string) => readFile(new URL(`../data/${f}`, import.meta.url), 'utf8');

async function input(dir: string, withReport = true): Promise<ParseInput> {
  return {
    report: withReport ? await data(`${dir}/junit.xml`) : null,
    stdout: await data(`${dir}/stdout.txt`),
    stderr: await data(`${dir}/stderr.txt`),
    exitCode: Number(await data(`${dir}/exit-code`)),
    workdir: '/WORK/pytest',
  };
}

const statuses = (tests: { id: string; status: string }[]) => Object.fromEntries(tests.map((t) => [t.id, t.status]));

describe('pytest adapter', () => {
  it('asks pytest for xunit1 JUnit XML in the scratch folder, keeping the user PYTEST_ADDOPTS and PYTHONPATH, with its plugin', () => {
    const p = pytestAdapter.prepare({
      command: 'python3 -m pytest -q',
      workdir: '/w',
      scratchDir: '/s',
      env: { PYTEST_ADDOPTS: '-x', PYTHONPATH: 'src' },
    });
    expect(p).toEqual({
      command: 'python3 -m pytest -q',
      env: {
        PYTEST_ADDOPTS: `-x --junitxml=/s/pytest-junit.xml -o junit_family=xunit1 -p no:cacheprovider --continue-on-collection-errors -p ${PYTEST_PLUGIN_MODULE}`,
        PYTHONPATH: '/s:src',
      },
      reportFile: '/s/pytest-junit.xml',
      files: [{ path: `/s/${PYTEST_PLUGIN_MODULE}.py`, content: PYTEST_PLUGIN_SOURCE }],
    });
  });

  it('goes without its plugin when the command sets PYTHONPATH itself (it would hide the plugin and fail)', () => {
    const p = pytestAdapter.prepare({ command: 'PYTHONPATH=lib pytest', workdir: '/w', scratchDir: '/s', env: {} });
    expect(p).toEqual({
      command: 'PYTHONPATH=lib pytest',
      env: { PYTEST_ADDOPTS: '--junitxml=/s/pytest-junit.xml -o junit_family=xunit1 -p no:cacheprovider --continue-on-collection-errors' },
      reportFile: '/s/pytest-junit.xml',
    });
  });

  it('reads node ids and statuses from the JUnit XML', async () => {
    const report = pytestAdapter.parse(await input('pytest'));
    expect(report.source).toBe('junit');
    expect(statuses(report.tests)).toEqual({
      'tests/pkg/test_deep.py::test_deep': 'passed',
      'tests/test_a.py::test_p[a b]': 'passed',
      'tests/test_a.py::test_p[plain]': 'failed',
      'tests/test_a.py::test_p[x-1.5]': 'passed',
      'tests/test_a.py::TestK::test_m': 'passed',
      'tests/test_a.py::TestK::TestInner::test_n': 'failed',
      'tests/test_a.py::test_skipped': 'skipped',
      'tests/test_a.py::test_xfail': 'skipped',
      'tests/test_a.py::test_uses_broken': 'error',
      'tests/test_a.py::test_prints': 'passed',
      'tests/test_a.py::test_bad_bytes': 'failed',
    });
    expect(report.counts).toEqual({ passed: 5, failed: 3, errors: 1, skipped: 2, total: 11 });
  });

  it('keeps the first lines of failure and error messages', async () => {
    const { tests } = pytestAdapter.parse(await input('pytest'));
    const byId = new Map(tests.map((t) => [t.id, t]));
    expect(byId.get('tests/test_a.py::TestK::TestInner::test_n')?.message).toBe('assert 1 == 2');
    expect(byId.get('tests/test_a.py::test_uses_broken')?.message).toBe('failed on setup with "RuntimeError: fixture exploded"');
    expect(byId.get('tests/test_a.py::test_bad_bytes')?.message).toBe('AssertionError: printed a latin-1 byte\nassert False');
    expect(byId.get('tests/test_a.py::test_prints')?.message).toBeUndefined();
  });

  it('names a module that fails to collect by its file, as pytest does, and the other modules still run', async () => {
    const report = pytestAdapter.parse(await input('pytest-collect-error'));
    expect(report.tests.map((t) => [t.id, t.status])).toEqual([
      ['test_broken.py', 'error'],
      ['test_ok.py::test_ok', 'passed'],
    ]);
    expect(report.tests[0]!.message).toBe('collection failure');
  });

  it('falls back to the -rA summary lines when there is no XML, despite a non-UTF-8 byte in the output', async () => {
    const i = await input('pytest', false);
    expect(i.stdout).toContain('caf\uFFFD is not utf-8');
    const report = pytestAdapter.parse(i);
    expect(report).toMatchObject({ source: 'stdout', note: 'pytest left no JUnit XML' });
    // The skipped test's summary line has no node id (`SKIPPED [1] tests/test_a.py:21`): not listed.
    expect(statuses(report.tests)).toEqual({
      'tests/pkg/test_deep.py::test_deep': 'passed',
      'tests/test_a.py::test_p[a b]': 'passed',
      'tests/test_a.py::test_p[x-1.5]': 'passed',
      'tests/test_a.py::TestK::test_m': 'passed',
      'tests/test_a.py::test_prints': 'passed',
      'tests/test_a.py::test_xfail': 'skipped',
      'tests/test_a.py::test_uses_broken': 'error',
      'tests/test_a.py::test_p[plain]': 'failed',
      'tests/test_a.py::TestK::TestInner::test_n': 'failed',
      'tests/test_a.py::test_bad_bytes': 'failed',
    });
  });

  it('falls back to the output, with a note, when the XML is unreadable', async () => {
    const report = pytestAdapter.parse({ ...(await input('pytest')), report: '<testsuites><testsuite' });
    expect(report.source).toBe('stdout');
    expect(report.note).toMatch(/^unreadable JUnit XML: /);
    expect(report.counts.total).toBe(10);
  });
});

describe('pytestId', () => {
  it('maps nested classes of an xunit1 classname to :: parts', () => {
    const [c] = parseJUnit(
      '<testsuite><testcase classname="tests.test_a.TestK.TestInner" name="test_n[1.5]" file="tests/test_a.py"/></testsuite>',
    );
    expect(pytestId(c!)).toBe('tests/test_a.py::TestK::TestInner::test_n[1.5]');
  });

  it('rebuilds the file from the classname when the XML has no file attribute (xunit2)', () => {
    const [c] = parseJUnit('<testsuites><testsuite><testcase classname="tests.test_a" name="test_x"/></testsuite></testsuites>');
    expect(pytestId(c!)).toBe('tests/test_a.py::test_x');
  });
});
