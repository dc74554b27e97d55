import path from 'node:path';
import { parseJUnit, toTestCase, type JUnitCase } from './junit.js';
import { PYTEST_PLUGIN_MODULE, PYTEST_PLUGIN_SOURCE } from './pytest-plugin.js';
import {
  countTests,
  mergeRepeats,
  type ParseInput,
  type PreparedRun,
  type RunnerAdapter,
  type TestCase,
  type TestReport,
} from './types.js';

/** pytest node id from an xunit1 testcase: `tests/test_a.py::TestK::test_m[param]`. */
export function pytestId(c: JUnitCase): string {
  if (!c.file) return c.classname ? `${c.classname.replace(/\./g, '/')}.py::${c.name}` : c.name;
  const file = c.file.split(path.sep).join('/');
  // Every test has at least its module as classname; an empty one is a module that failed to
  // collect, whose node id is the file itself (pytest prints `ERROR tests/test_x.py`).
  if (!c.classname) return file;
  const module = file.replace(/\.py$/, '').replace(/\//g, '.');
  const classes = c.classname.startsWith(`${module}.`) ? c.classname.slice(module.length + 1).split('.') : [];
  return [file, ...classes, c.name].join('::');
}

// A parametrised id may hold spaces (`test_p[a b]`), so the brackets are read as a whole.
const LINE = /^(PASSED|FAILED|ERROR|SKIPPED|XFAIL|XPASS) (\S+?::[^\s[]+(?:\[.*?\])?)(?: - .*)?$/;

/** Fallback: the `-rA` style summary lines pytest prints. */
function parseStdout(out: string): TestCase[] {
  const tests: TestCase[] = [];
  for (const line of out.split('\n')) {
    const m = LINE.exec(line.trimEnd());
    if (!m) continue;
    const word = m[1]!;
    const status = word === 'PASSED' || word === 'XPASS' ? 'passed' : word === 'FAILED' ? 'failed' : word === 'ERROR' ? 'error' : 'skipped';
    tests.push({ id: m[2]!, status });
  }
  return mergeRepeats(tests);
}

export const pytestAdapter: RunnerAdapter = {
  runner: 'pytest',
  infrastructure: ['conftest.py', 'pytest.ini', 'tox.ini', 'setup.cfg', 'pyproject.toml', 'sitecustomize.py', 'usercustomize.py', '*.pth'],
  prepare(ctx): PreparedRun {
    const reportFile = `${ctx.scratchDir}/pytest-junit.xml`;
    // PYTEST_ADDOPTS reaches pytest whatever the command looks like (`cd x && pytest`, `make test`).
    // The harness's plugin (a second signal) is imported from the scratch folder; a command that
    // sets PYTHONPATH itself would hide it and fail, so it goes without.
    const plugin = !/\bPYTHONPATH=/.test(ctx.command);
    // A test module that fails to import (a fix's new test of a name the bug lacks) would otherwise
    // stop the whole session before any test ran: RED would show one error and nothing else, and
    // every test passing in GREEN would look fixed by the patch. It is that module's error only.
    const ours = `--junitxml=${reportFile} -o junit_family=xunit1 -p no:cacheprovider --continue-on-collection-errors${plugin ? ` -p ${PYTEST_PLUGIN_MODULE}` : ''}`;
    const addopts = ctx.env.PYTEST_ADDOPTS ? `${ctx.env.PYTEST_ADDOPTS} ${ours}` : ours;
    if (!plugin) return { command: ctx.command, env: { PYTEST_ADDOPTS: addopts }, reportFile };
    const pythonPath = ctx.env.PYTHONPATH ? `${ctx.scratchDir}:${ctx.env.PYTHONPATH}` : ctx.scratchDir;
    return {
      command: ctx.command,
      env: { PYTEST_ADDOPTS: addopts, PYTHONPATH: pythonPath },
      reportFile,
      files: [{ path: `${ctx.scratchDir}/${PYTEST_PLUGIN_MODULE}.py`, content: PYTEST_PLUGIN_SOURCE }],
    };
  },
  parse(input: ParseInput): TestReport {
    if (input.report) {
      try {
        const tests = mergeRepeats(parseJUnit(input.report).map((c) => toTestCase(c, pytestId(c))));
        return { source: 'junit', tests, counts: countTests(tests) };
      } catch (e) {
        const tests = parseStdout(input.stdout);
        return { source: 'stdout', tests, counts: countTests(tests), note: `unreadable JUnit XML: ${(e as Error).message}` };
      }
    }
    const tests = parseStdout(input.stdout);
    return { source: 'stdout', tests, counts: countTests(tests), note: 'pytest left no JUnit XML' };
  },
};
