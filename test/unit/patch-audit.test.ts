import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { addedLines, auditPatch, describeAudit, looksLikeTest } from '../../harness/patch/audit.js';
import { AUDIT_RULES, HARNESS_REPORT_NAMES, rulesBrokenBy } from '../../harness/patch/audit-rules.js';
import { parsePatch } from '../../harness/patch/parse.js';
import { protectedMatcher } from '../../harness/patch/protect.js';
import { adapterFor } from '../../harness/results/index.js';
import { RUNNERS } from '../../harness/fixtures/manifest.js';
import { REPO } from '../helpers/cli.js';

const audit = (text: string, globs: string[] = []) => auditPatch(text, parsePatch(text), protectedMatcher(globs));

/** A git-style patch adding `lines` to `file` (a new file). */
const adds = (file: string, lines: string[]) =>
  `diff --git a/${file} b/${file}\nnew file mode 100644\n--- /dev/null\n+++ b/${file}\n@@ -0,0 +1,${lines.length} @@\n${lines.map((l) => `+${l}`).join('\n')}\n`;

/** One line per way of forging, with the rule that must catch it. */
const EXAMPLES: [string, string][] = [
  ['pytest-internals', 'from _pytest.reports import TestReport'],
  ['pytest-internals', '    rep.outcome = "passed"'],
  ['pytest-internals', 'def pytest_runtest_makereport(item, call):'],
  ['pytest-internals', '@pytest.hookimpl(hookwrapper=True)'],
  ['unittest-result', 'unittest.TestResult.addFailure = lambda *a: None'],
  ['unittest-result', 'result.wasSuccessful = lambda: True'],
  ['assert-override', 'assert.strictEqual = () => {};'],
  ['assert-override', 'unittest.TestCase.assertEqual = lambda *a: None'],
  ['assert-override', 'expect.extend({ toBe: () => ({ pass: true, message: () => "" }) });'],
  ['vitest-internals', "import { getCurrentTest } from '@vitest/runner';"],
  ['vitest-internals', 'ctx.task.result.state = "pass";'],
  ['vitest-internals', "import { DefaultReporter } from 'vitest/reporters';"],
  ['node-test-internals', "import { spec } from 'node:test/reporters';"],
  ['js-runner-internals', "require('jest-circus/runner');"],
  ['js-runner-internals', "const { Runner } = require('mocha/lib/runner');"],
  ['js-runner-internals', 'globalThis.UVU_QUEUE = [];'],
  ['js-runner-internals', 'Object.defineProperty(state, "__test__", { set() {} });'],
  ['exit-override', 'os._exit(0)'],
  ['exit-override', 'process.exit(0);'],
  ['exit-override', 'process.exitCode = 0;'],
  ['exit-override', 'process.exit = () => {};'],
  ['exit-override', 'sys.exit = lambda *a: None'],
  ['exit-hook', 'atexit.register(cleanup)'],
  ['exit-hook', "process.on('exit', () => {});"],
  ['module-rewire', 'sys.modules["_pytest.runner"].call_and_report = f'],
  ['module-rewire', 'delete require.cache[key];'],
  ['output-rewire', 'sys.stderr = io.StringIO()'],
  ['output-rewire', 'process.stdout.write = () => true;'],
  ['test-framework-import', 'import pytest'],
  ['test-framework-import', "import { afterEach } from 'vitest';"],
  ['test-framework-import', "import test from 'ava';"],
  ['test-framework-import', "const { suite } = require('uvu');"],
  ['harness-report', "open(os.environ['REDGREEN_SCRATCH'] + '/pytest-junit.xml', 'w')"],
  ['harness-report', 'const opts = process.env.NODE_OPTIONS.split("--test-reporter-destination=")[1];'],
  ['harness-report', 'm = re.search(r"--junitxml=(\\S+)", os.environ["PYTEST_ADDOPTS"])'],
];

const rulesOf = (line: string, inTest = false) => rulesBrokenBy(line, inTest).map((r) => r.id);

describe('addedLines: what a patch adds, where', () => {
  test('follows hunk counts: numbers lines in the new file, skips context and removals, reads "+++"-looking added lines', () => {
    const patch = [
      'diff --git a/src/x.py b/src/x.py',
      '--- a/src/x.py',
      '+++ b/src/x.py',
      '@@ -10,4 +10,5 @@ def f():',
      ' keep',
      '-old',
      '+new one',
      '++++ looks like a header',
      ' keep',
      ' keep',
      '\\ No newline at end of file',
      '--- a/y.js',
      '+++ b/y.js',
      '@@ -1 +1 @@',
      '-a',
      '+b',
      '',
    ].join('\n');
    expect(addedLines(patch, 1)).toEqual([
      { file: 'src/x.py', line: 11, text: 'new one' },
      { file: 'src/x.py', line: 12, text: '+++ looks like a header' },
      { file: 'y.js', line: 1, text: 'b' },
    ]);
  });

  test('a deleted file adds nothing', () => {
    expect(addedLines('--- a/x.py\n+++ /dev/null\n@@ -1 +0,0 @@\n-import atexit\n', 1)).toEqual([]);
  });
});

describe('audit rules: each names a way to forge a pass', () => {
  test.each(EXAMPLES)('%s: %s', (rule, line) => {
    expect(rulesOf(line)).toContain(rule);
  });

  test('every rule has an example above, and says why', () => {
    expect(new Set(EXAMPLES.map(([rule]) => rule))).toEqual(new Set(AUDIT_RULES.map((r) => r.id)));
    for (const r of AUDIT_RULES) expect(r.why.length).toBeGreaterThan(10);
  });

  test('ordinary code is not flagged', () => {
    for (const line of [
      'outcome = resolve(order)',
      'if result.state == "done":',
      'process.exit(1);',
      'sys.exit(main())',
      'from unittest.mock import patch',
      'const outputFile = path.join(dir, "out.txt");',
      'return subtotal + shippingCents;',
      'self._stock: Dict[str, int] = {}',
      'assert total == expected',
      'expect(add(2, 3)).toBe(5);',
    ]) {
      expect(rulesOf(line), line).toEqual([]);
    }
  });

  test('in files that look like tests, only the rules honest test code never needs count', () => {
    expect(rulesOf('import pytest', true)).toEqual([]);
    expect(rulesOf('with patch.dict(sys.modules, {"requests": fake}):', true)).toEqual([]);
    expect(rulesOf('from _pytest.reports import TestReport', true)).toContain('pytest-internals');
    expect(rulesOf('os._exit(0)', true)).toContain('exit-override');
  });

  test('the report files every adapter prepares are named by the harness-report rule', () => {
    for (const runner of RUNNERS) {
      const p = adapterFor(runner).prepare({ command: 'x', workdir: '/w', scratchDir: '/scratch', env: {}, reportPath: 'r.xml' });
      if (!p.reportFile?.startsWith('/scratch/')) continue; // reports the fixture names itself (junit's reportPath)
      const name = path.basename(p.reportFile);
      expect(HARNESS_REPORT_NAMES, `${runner}: ${name}`).toContain(name);
      for (const f of p.files ?? []) expect(rulesOf(`open("${f.path}")`), f.path).toContain('harness-report');
    }
  });
});

describe('auditPatch: added lines of the files that run', () => {
  test('names file, line, rules and text; skips protected files (the harness restores them)', () => {
    const patch =
      adds('calc.py', ['def add(a, b):', '    return a + b', 'from _pytest.reports import TestReport']) +
      adds('conftest.py', ['import pytest', 'def pytest_runtest_makereport(item, call): pass']);
    const findings = audit(patch, ['conftest.py']);
    expect(findings).toEqual([
      { file: 'calc.py', line: 3, rule: 'pytest-internals, test-framework-import', text: 'from _pytest.reports import TestReport' },
    ]);
    expect(describeAudit(findings)).toBe('calc.py:3 [pytest-internals, test-framework-import] from _pytest.reports import TestReport');
  });

  test('a new test file may import pytest and mock sys.modules, not rewrite reports', () => {
    const findings = audit(
      adds('tests/test_new.py', [
        'import pytest',
        'import sys',
        'def test_x(monkeypatch):',
        '    monkeypatch.setitem(sys.modules, "x", None)',
        '    rep.outcome = "passed"',
      ]),
    );
    expect(findings.map((f) => f.line)).toEqual([5]);
    expect(looksLikeTest('src/a.test.ts')).toBe(true);
    expect(looksLikeTest('src/a.ts')).toBe(false);
  });

  test("the repository's own oracles are not flagged", async () => {
    const dir = path.join(REPO, 'oracles');
    for (const name of await readdir(dir)) {
      const text = await readFile(path.join(dir, name), 'utf8');
      expect(audit(text), name).toEqual([]);
    }
  });
});
