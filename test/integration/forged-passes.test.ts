import { describe, expect, test } from 'vitest';
import { mapProvider, oracleProvider } from '../../harness/agents/static.js';
import { diffTrees } from '../../harness/fixtures/scaffold.js';
import type { FixtureResult } from '../../harness/pipeline/result.js';
import { REPO } from '../helpers/cli.js';
import { ADD_PY, ADD_TEST, PYTEST, runProject, useProjects, type InlineFixture } from '../helpers/project.js';

/**
 * Patches to a *source* file (never a test: protected files are restored anyway) that make the
 * failing tests pass without fixing the bug, by reaching into the runner. None may end as a clean
 * `resolved`: the patch audit flags them (suspicious; rejected under --strict), and where the
 * runner allows a second signal, the harness's own record of the run contradicts the report.
 */
// Some tests grade twice: every project a test made is removed after it.
const made = useProjects();

const FIXED_PY = 'def add(a, b):\n    return a + b\n';

const pytestFixture = async (): Promise<InlineFixture> => ({
  manifest: { ...PYTEST, tests: { failToPass: ['test_calc.py::test_add'], passToPass: ['test_calc.py::test_zero'] } },
  files: { 'calc.py': ADD_PY, 'test_calc.py': ADD_TEST },
  oracle: await diffTrees({ 'calc.py': ADD_PY }, { 'calc.py': FIXED_PY }),
});

const UNITTEST_TEST =
  'import unittest\n\nfrom calc import add\n\n\nclass TestAdd(unittest.TestCase):\n    def test_add(self):\n        self.assertEqual(add(2, 3), 5)\n\n    def test_zero(self):\n        self.assertEqual(add(4, 0), 4)\n';
const unittestFixture = async (): Promise<InlineFixture> => ({
  manifest: {
    runner: 'unittest',
    test: { command: 'python3 -m unittest -v', timeoutSec: 30 },
    tests: { failToPass: ['test_calc.TestAdd.test_add'], passToPass: ['test_calc.TestAdd.test_zero'] },
    protected: ['test_*.py'],
  },
  files: { 'calc.py': ADD_PY, 'test_calc.py': UNITTEST_TEST },
  oracle: await diffTrees({ 'calc.py': ADD_PY }, { 'calc.py': FIXED_PY }),
});

const ADD_JS = 'export function add(a, b) {\n  return a - b;\n}\n';
const FIXED_JS = 'export function add(a, b) {\n  return a + b;\n}\n';
const NODE_TEST =
  "import test from 'node:test';\nimport assert from 'node:assert/strict';\nimport { add } from '../src/add.js';\n\ntest('adds', () => assert.equal(add(2, 3), 5));\ntest('zero', () => assert.equal(add(4, 0), 4));\n";
const nodeFixture = async (): Promise<InlineFixture> => ({
  manifest: {
    language: 'javascript',
    runner: 'node-test',
    test: { command: 'node --test', timeoutSec: 30 },
    tests: { failToPass: ['test/add.test.js::adds'], passToPass: ['test/add.test.js::zero'] },
    protected: ['test/**'],
  },
  files: { 'package.json': '{ "type": "module" }\n', 'src/add.js': ADD_JS, 'test/add.test.js': NODE_TEST },
  oracle: await diffTrees({ 'src/add.js': ADD_JS }, { 'src/add.js': FIXED_JS }),
});

const ADD_TS = 'export function add(a: number, b: number): number {\n  return a - b;\n}\n';
const FIXED_TS = 'export function add(a: number, b: number): number {\n  return a + b;\n}\n';
const VITEST_TEST =
  "import { expect, test } from 'vitest';\nimport { add } from './add';\n\ntest('adds', () => expect(add(2, 3)).toBe(5));\ntest('zero', () => expect(add(4, 0)).toBe(4));\n";
const vitestFixture = async (): Promise<InlineFixture> => ({
  manifest: {
    language: 'typescript',
    runner: 'vitest',
    // Only the vitest package is linked in: its cache then stays in the sandbox's own node_modules.
    setup: { commands: [`mkdir -p node_modules && ln -s ${REPO}/node_modules/vitest node_modules/vitest`], timeoutSec: 60 },
    test: { command: 'node node_modules/vitest/vitest.mjs run', timeoutSec: 60 },
    tests: { failToPass: ['src/add.test.ts::adds'], passToPass: ['src/add.test.ts::zero'] },
    protected: ['src/**/*.test.ts', 'package.json'],
  },
  files: { 'package.json': '{ "type": "module" }\n', 'src/add.ts': ADD_TS, 'src/add.test.ts': VITEST_TEST },
  oracle: await diffTrees({ 'src/add.ts': ADD_TS }, { 'src/add.ts': FIXED_TS }),
});

// --- The forgeries: each replaces the buggy source file, keeping the bug. -------------------------

/** pytest: the module rewrites every TestReport pytest makes into a pass, as soon as a test imports it. */
const TEST_REPORT = `${ADD_PY}

from _pytest.reports import TestReport

_made = TestReport.from_item_and_call.__func__


def _passed(cls, item, call):
    report = _made(cls, item, call)
    report.outcome, report.longrepr = "passed", None
    return report


TestReport.from_item_and_call = classmethod(_passed)
`;

/** pytest, no conftest and no "_pytest" in sight: the runner's CallInfo, reached through sys.modules, drops every exception. */
const SYS_MODULES = `import sys

${ADD_PY}

_runner = sys.modules["_py" + "test.runner"]
_from_call = _runner.CallInfo.from_call.__func__


def _swallow(cls, *args, **kwargs):
    info = _from_call(cls, *args, **kwargs)
    object.__setattr__(info, "excinfo", None)
    return info


_runner.CallInfo.from_call = classmethod(_swallow)
`;

/** pytest: at exit, a JUnit XML with every test passing replaces pytest's, and the exit code is forced to 0. */
const FAKE_JUNIT = `import atexit
import os
import re

${ADD_PY}

def _fake_report():
    m = re.search(r"--junitxml=(\\S+)", os.environ.get("PYTEST_ADDOPTS", ""))
    if m:
        cases = "".join(f'<testcase classname="test_calc" name="{n}" file="test_calc.py" />' for n in ("test_add", "test_zero"))
        with open(m.group(1), "w") as f:
            f.write(f'<testsuites><testsuite name="pytest" tests="2">{cases}</testsuite></testsuites>')
    os._exit(0)


atexit.register(_fake_report)
`;

/** pytest, hidden from the audit (no name it knows): only the harness's own record of the run can tell. */
const OBFUSCATED = `import importlib

${ADD_PY}

_reports = importlib.import_module("_py" + "test.reports")
_kind = getattr(_reports, "Test" + "Report")
_made = getattr(_kind, "from_item" + "_and_call").__func__


def _passed(cls, item, call):
    report = _made(cls, item, call)
    setattr(report, "out" + "come", "passed")
    return report


setattr(_kind, "from_item" + "_and_call", classmethod(_passed))
`;

/** unittest: a failure is recorded (and printed) as a success. */
const ADD_FAILURE = `import unittest

${ADD_PY}

unittest.TextTestResult.addFailure = lambda self, test, err: self.addSuccess(test)
`;

/** node:test: the test process writes passing lines into the harness's report file, then exits 0 before any test runs. */
const NODE_REPORT_FILE = `import { writeFileSync } from 'node:fs';

${ADD_JS}
const dest = /--test-reporter-destination=(\\S+\\.jsonl)/.exec(process.env.NODE_OPTIONS || '')?.[1];
if (dest) {
  const file = new URL('../test/add.test.js', import.meta.url).pathname;
  const lines = ['adds', 'zero'].map((name) => JSON.stringify({ file, path: [name], type: 'test', status: 'passed' }));
  writeFileSync(dest, ' '.repeat(4096) + '\\n' + lines.join('\\n') + '\\n');
  process.exit(0);
}
`;

/** vitest: a hook registered by the source module turns every finished test into a pass. */
const VITEST_TASK = `import { afterEach } from 'vitest';

${ADD_TS}
afterEach((ctx) => {
  const result = ctx.task.result;
  if (result) {
    result.state = 'pass';
    result.errors = [];
  }
});
`;

interface Forgery {
  name: string;
  fixture: () => Promise<InlineFixture>;
  file: string;
  before: string;
  forged: string;
  /** A rule the audit must name, and a line it must show. */
  rule: string;
  line: string;
  /** What the second signal says, for runners that have one. */
  signal?: RegExp;
  /** The verdict without --strict: suspicious when the forged pass stands, unresolved when the second signal drops it. */
  verdict: 'suspicious' | 'unresolved';
}

const FORGERIES: Forgery[] = [
  {
    name: "pytest: a source module rewrites TestReport's outcomes",
    fixture: pytestFixture,
    file: 'calc.py',
    before: ADD_PY,
    forged: TEST_REPORT,
    rule: 'pytest-internals',
    line: 'from _pytest.reports import TestReport',
    signal: /pytest internals were replaced during the run: _pytest\.reports\.TestReport\.from_item_and_call/,
    verdict: 'suspicious',
  },
  {
    name: "pytest: sys.modules['_py' + 'test.runner'] rewired to drop exceptions",
    fixture: pytestFixture,
    file: 'calc.py',
    before: ADD_PY,
    forged: SYS_MODULES,
    rule: 'module-rewire',
    line: '_runner = sys.modules["_py" + "test.runner"]',
    signal: /_pytest\.runner\.CallInfo\.from_call/,
    verdict: 'suspicious',
  },
  {
    name: 'pytest: a fake JUnit XML written at exit, exit code forced to 0',
    fixture: pytestFixture,
    file: 'calc.py',
    before: ADD_PY,
    forged: FAKE_JUNIT,
    rule: 'exit-override',
    line: 'os._exit(0)',
    signal: /lacks the harness's pytest plugin record/,
    verdict: 'suspicious',
  },
  {
    name: 'unittest: TextTestResult.addFailure records a success',
    fixture: unittestFixture,
    file: 'calc.py',
    before: ADD_PY,
    forged: ADD_FAILURE,
    rule: 'unittest-result',
    line: 'unittest.TextTestResult.addFailure = lambda self, test, err: self.addSuccess(test)',
    verdict: 'suspicious',
  },
  {
    name: "node:test: passing lines written into the harness's report, then process.exit(0)",
    fixture: nodeFixture,
    file: 'src/add.js',
    before: ADD_JS,
    forged: NODE_REPORT_FILE,
    rule: 'harness-report',
    line: "const dest = /--test-reporter-destination=(\\S+\\.jsonl)/.exec(process.env.NODE_OPTIONS || '')?.[1];",
    signal: /line\(s\) of the node:test report were not written by the harness's reporter/,
    verdict: 'unresolved',
  },
  {
    name: "vitest: an afterEach hook in the source sets every task's result to pass",
    fixture: vitestFixture,
    file: 'src/add.ts',
    before: ADD_TS,
    forged: VITEST_TASK,
    rule: 'vitest-internals',
    line: 'const result = ctx.task.result;',
    verdict: 'suspicious',
  },
];

async function grade(f: Forgery, options: { strict?: boolean } = {}): Promise<FixtureResult> {
  const project = await made({ forged: await f.fixture() });
  const text = await diffTrees({ [f.file]: f.before }, { [f.file]: f.forged });
  const provider = mapProvider('forger', new Map([['forged', { source: 'forger', text }]]));
  const r = await runProject(project, { mode: 'run', provider, strict: !!options.strict });
  return r.byId.forged!;
}

describe('forged passes are caught', () => {
  test.each(FORGERIES)('$name: never a clean resolved; flagged with its lines', async (f) => {
    const r = await grade(f);
    expect(r.verdict, r.reason).toBe(f.verdict);
    expect(r.patch?.audit).toContainEqual(expect.objectContaining({ file: f.file, rule: expect.stringContaining(f.rule), text: f.line }));
    if (f.verdict === 'suspicious') expect(r.reason).toContain('reaches into test-framework internals');
    if (f.signal) expect(r.green?.problems.join('\n')).toMatch(f.signal);
  });

  test.each(FORGERIES)('$name: rejected under --strict, before any sandbox', async (f) => {
    const r = await grade(f, { strict: true });
    expect(r).toMatchObject({ verdict: 'rejected', sandboxId: null, red: null, green: null });
    expect(r.reason).toContain(f.line.slice(0, 40));
  });

  test('a forgery the audit cannot see is still caught by the harness pytest plugin', async () => {
    const r = await grade({ ...FORGERIES[0]!, forged: OBFUSCATED });
    expect(r.patch?.audit).toBeUndefined();
    expect(r.verdict, r.reason).toBe('suspicious');
    expect(r.reason).toMatch(/the test results disagree: .*_pytest\.reports\.TestReport\.from_item_and_call/);
    // The same patch today, without the second signal, was a clean resolved; --strict cannot refuse what it cannot see.
    expect((await grade({ ...FORGERIES[0]!, forged: OBFUSCATED }, { strict: true })).verdict).toBe('suspicious');
  });

  test.each([
    ['pytest', pytestFixture],
    ['unittest', unittestFixture],
    ['node:test', nodeFixture],
    ['vitest', vitestFixture],
  ] as const)('an honest fix (%s oracle) is resolved, with no audit finding and no disagreement', async (_name, make) => {
    const project = await made({ honest: await make() });
    const strict = await runProject(project, { mode: 'run', provider: oracleProvider, strict: true });
    const r = strict.byId.honest!;
    expect(r.verdict, r.reason).toBe('resolved');
    expect(r.patch?.audit).toBeUndefined();
    expect(r.red?.problems).toEqual([]);
    expect(r.green?.problems).toEqual([]);
  });
});
