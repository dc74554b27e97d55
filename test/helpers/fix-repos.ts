import { NPM_TEMPLATES } from '../../harness/fixtures/templates-js.js';
import type { CommitSpec } from './git-repos.js';

/**
 * Small projects with a history of a real-looking fix, one per runner redgreen detects: a
 * `clamp(x, lo, hi)` that ignores its upper bound, and the commit that fixes it and adds the test
 * that proves it. The npm runners are pinned at the templates' versions (installed by the
 * fixture's own setup, from the npm registry through the shared download cache).
 */
export interface RunnerRepo {
  runner: string;
  history: CommitSpec[];
  /** The failToPass and passToPass selfcheck must record for the fix (the last commit). */
  failToPass: string[];
  passToPass: string[];
}

const version = (runner: keyof typeof NPM_TEMPLATES, pkg: string) =>
  (JSON.parse(NPM_TEMPLATES[runner].files['package.json']!) as { devDependencies: Record<string, string> }).devDependencies[pkg]!;

const ESM_BUG = 'export function clamp(x, lo, hi) {\n  return Math.max(lo, x);\n}\n';
const ESM_FIX = 'export function clamp(x, lo, hi) {\n  return Math.min(hi, Math.max(lo, x));\n}\n';
const CJS_BUG = 'function clamp(x, lo, hi) {\n  return Math.max(lo, x);\n}\n\nmodule.exports = { clamp };\n';
const CJS_FIX = 'function clamp(x, lo, hi) {\n  return Math.min(hi, Math.max(lo, x));\n}\n\nmodule.exports = { clamp };\n';
const MESSAGE = 'Fix clamp() ignoring the upper bound\n\nclamp(15, 0, 10) returned 15: the upper bound was never applied.';

function npmRepo(o: {
  runner: string;
  pkg: string;
  version: string;
  script: string;
  esm: boolean;
  file: string;
  test: (cases: string) => string;
  kase: (name: string, call: string, want: number) => string;
  failToPass: string[];
  passToPass: string[];
}): RunnerRepo {
  const pkg = (extra: object) =>
    `${JSON.stringify({ name: `clamp-${o.runner}`, version: '1.0.0', private: true, ...(o.esm ? { type: 'module' } : {}), scripts: { test: o.script }, ...extra }, null, 2)}\n`;
  const base = [o.kase('keeps values inside', 'clamp(5, 0, 10)', 5), o.kase('raises values below', 'clamp(-3, 0, 10)', 0)];
  const withFix = [...base, o.kase('lowers values above', 'clamp(15, 0, 10)', 10)];
  return {
    runner: o.runner,
    history: [
      {
        message: 'Add clamp()',
        files: {
          'package.json': pkg({ devDependencies: { [o.pkg]: o.version } }),
          'src/clamp.js': o.esm ? ESM_BUG : CJS_BUG,
          [o.file]: o.test(base.join('\n')),
          '.gitignore': 'node_modules\n',
        },
      },
      { message: 'Describe clamp() in the README', files: { 'README.md': '# clamp\n\nKeeps a number within bounds.\n' } },
      { message: MESSAGE, files: { 'src/clamp.js': o.esm ? ESM_FIX : CJS_FIX, [o.file]: o.test(withFix.join('\n')) } },
    ],
    failToPass: o.failToPass,
    passToPass: o.passToPass,
  };
}

export const JS_REPOS: RunnerRepo[] = [
  npmRepo({
    runner: 'vitest',
    pkg: 'vitest',
    version: '4.1.12',
    script: 'vitest run',
    esm: true,
    file: 'src/clamp.test.js',
    test: (c) =>
      `import { describe, expect, test } from 'vitest';\nimport { clamp } from './clamp.js';\n\ndescribe('clamp', () => {\n${c}\n});\n`,
    kase: (n, call, want) => `  test('${n}', () => expect(${call}).toBe(${want}));`,
    failToPass: ['src/clamp.test.js::clamp > lowers values above'],
    passToPass: ['src/clamp.test.js::clamp > keeps values inside', 'src/clamp.test.js::clamp > raises values below'],
  }),
  npmRepo({
    runner: 'jest',
    pkg: 'jest',
    version: version('jest', 'jest'),
    script: 'jest',
    esm: false,
    file: 'test/clamp.test.js',
    test: (c) => `const { clamp } = require('../src/clamp');\n\ndescribe('clamp', () => {\n${c}\n});\n`,
    kase: (n, call, want) => `  test('${n}', () => expect(${call}).toBe(${want}));`,
    failToPass: ['test/clamp.test.js::clamp > lowers values above'],
    passToPass: ['test/clamp.test.js::clamp > keeps values inside', 'test/clamp.test.js::clamp > raises values below'],
  }),
  npmRepo({
    runner: 'mocha',
    pkg: 'mocha',
    version: version('mocha', 'mocha'),
    script: 'mocha',
    esm: false,
    file: 'test/clamp.test.js',
    test: (c) =>
      `const assert = require('node:assert/strict');\nconst { clamp } = require('../src/clamp');\n\ndescribe('clamp', () => {\n${c}\n});\n`,
    kase: (n, call, want) => `  it('${n}', () => assert.equal(${call}, ${want}));`,
    failToPass: ['test/clamp.test.js::clamp > lowers values above'],
    passToPass: ['test/clamp.test.js::clamp > keeps values inside', 'test/clamp.test.js::clamp > raises values below'],
  }),
  npmRepo({
    runner: 'ava',
    pkg: 'ava',
    version: version('ava', 'ava'),
    script: 'ava',
    esm: true,
    file: 'test/clamp.test.js',
    test: (c) => `import test from 'ava';\nimport { clamp } from '../src/clamp.js';\n\n${c}\n`,
    kase: (n, call, want) => `test('${n}', (t) => t.is(${call}, ${want}));`,
    failToPass: ['test/clamp.test.js::lowers values above'],
    passToPass: ['test/clamp.test.js::keeps values inside', 'test/clamp.test.js::raises values below'],
  }),
  npmRepo({
    runner: 'uvu',
    pkg: 'uvu',
    version: version('uvu', 'uvu'),
    script: 'uvu test',
    esm: true,
    file: 'test/clamp.test.js',
    test: (c) =>
      `import { suite } from 'uvu';\nimport * as assert from 'uvu/assert';\nimport { clamp } from '../src/clamp.js';\n\nconst t = suite('clamp');\n${c}\nt.run();\n`,
    kase: (n, call, want) => `t('${n}', () => assert.is(${call}, ${want}));`,
    failToPass: ['test/clamp.test.js::clamp > lowers values above'],
    passToPass: ['test/clamp.test.js::clamp > keeps values inside', 'test/clamp.test.js::clamp > raises values below'],
  }),
  npmRepo({
    runner: 'tap',
    pkg: 'tape',
    version: version('tap', 'tape'),
    script: "tape 'test/*.js'",
    esm: false,
    file: 'test/clamp.test.js',
    test: (c) => `const test = require('tape');\nconst { clamp } = require('../src/clamp');\n\n${c}\n`,
    kase: (n, call, want) => `test('${n}', (t) => {\n  t.equal(${call}, ${want});\n  t.end();\n});`,
    failToPass: ['test/clamp.test.js::lowers values above'],
    passToPass: ['test/clamp.test.js::keeps values inside', 'test/clamp.test.js::raises values below'],
  }),
  ((): RunnerRepo => {
    // node:test needs no package: no dependencies, so no setup and no network.
    const repo = npmRepo({
      runner: 'node-test',
      pkg: '',
      version: '',
      script: 'node --test',
      esm: true,
      file: 'test/clamp.test.js',
      test: (c) =>
        `import { describe, test } from 'node:test';\nimport assert from 'node:assert/strict';\nimport { clamp } from '../src/clamp.js';\n\ndescribe('clamp', () => {\n${c}\n});\n`,
      kase: (n, call, want) => `  test('${n}', () => assert.equal(${call}, ${want}));`,
      failToPass: ['test/clamp.test.js::clamp > lowers values above'],
      passToPass: ['test/clamp.test.js::clamp > keeps values inside', 'test/clamp.test.js::clamp > raises values below'],
    });
    const first = repo.history[0]!;
    first.files['package.json'] =
      `${JSON.stringify({ name: 'clamp-node-test', version: '1.0.0', private: true, type: 'module', scripts: { test: 'node --test' } }, null, 2)}\n`;
    return repo;
  })(),
];

const PY_BUG = 'def clamp(x, lo, hi):\n    """x within [lo, hi]."""\n    return max(lo, x)\n';
const PY_FIX = 'def clamp(x, lo, hi):\n    """x within [lo, hi]."""\n    return min(hi, max(lo, x))\n';

export const PY_REPOS: RunnerRepo[] = [
  ((): RunnerRepo => {
    const cases = (fix: boolean) =>
      `from clamp import clamp\n\n\ndef test_inside():\n    assert clamp(5, 0, 10) == 5\n\n\ndef test_below():\n    assert clamp(-3, 0, 10) == 0\n${fix ? '\n\ndef test_above():\n    assert clamp(15, 0, 10) == 10\n' : ''}`;
    return {
      runner: 'pytest',
      history: [
        {
          message: 'Add clamp()',
          files: { 'pytest.ini': '[pytest]\npythonpath = .\n', 'clamp.py': PY_BUG, 'tests/test_clamp.py': cases(false) },
        },
        { message: 'Describe clamp() in the README', files: { 'README.md': '# clamp\n' } },
        { message: MESSAGE, files: { 'clamp.py': PY_FIX, 'tests/test_clamp.py': cases(true) } },
      ],
      failToPass: ['tests/test_clamp.py::test_above'],
      passToPass: ['tests/test_clamp.py::test_below', 'tests/test_clamp.py::test_inside'],
    };
  })(),
  ((): RunnerRepo => {
    const cases = (fix: boolean) =>
      `import unittest\n\nfrom clamp import clamp\n\n\nclass TestClamp(unittest.TestCase):\n    def test_inside(self):\n        self.assertEqual(clamp(5, 0, 10), 5)\n\n    def test_below(self):\n        self.assertEqual(clamp(-3, 0, 10), 0)\n${fix ? '\n    def test_above(self):\n        self.assertEqual(clamp(15, 0, 10), 10)\n' : ''}`;
    return {
      runner: 'unittest',
      history: [
        { message: 'Add clamp()', files: { 'clamp.py': PY_BUG, 'test_clamp.py': cases(false) } },
        { message: 'Describe clamp() in the README', files: { 'README.md': '# clamp\n' } },
        { message: MESSAGE, files: { 'clamp.py': PY_FIX, 'test_clamp.py': cases(true) } },
      ],
      failToPass: ['test_clamp.TestClamp.test_above'],
      passToPass: ['test_clamp.TestClamp.test_below', 'test_clamp.TestClamp.test_inside'],
    };
  })(),
];

export const NATIVE_REPOS: RunnerRepo[] = [
  ((): RunnerRepo => {
    const bug =
      'package clamp\n\n// Clamp returns x within [lo, hi].\nfunc Clamp(x, lo, hi int) int {\n\tif x < lo {\n\t\treturn lo\n\t}\n\treturn x\n}\n';
    const fix =
      'package clamp\n\n// Clamp returns x within [lo, hi].\nfunc Clamp(x, lo, hi int) int {\n\tif x < lo {\n\t\treturn lo\n\t}\n\tif x > hi {\n\t\treturn hi\n\t}\n\treturn x\n}\n';
    const test = (above: boolean) =>
      `package clamp\n\nimport "testing"\n\nfunc TestInside(t *testing.T) {\n\tif Clamp(5, 0, 10) != 5 {\n\t\tt.Fatal("inside")\n\t}\n}\n\nfunc TestBelow(t *testing.T) {\n\tif Clamp(-3, 0, 10) != 0 {\n\t\tt.Fatal("below")\n\t}\n}\n${above ? '\nfunc TestAbove(t *testing.T) {\n\tif got := Clamp(15, 0, 10); got != 10 {\n\t\tt.Fatalf("Clamp(15, 0, 10) = %d", got)\n\t}\n}\n' : ''}`;
    return {
      runner: 'go',
      history: [
        {
          message: 'Add Clamp',
          files: { 'go.mod': 'module example.com/clamp\n\ngo 1.19\n', 'clamp.go': bug, 'clamp_test.go': test(false) },
        },
        { message: 'Describe Clamp in the README', files: { 'README.md': '# clamp\n' } },
        { message: MESSAGE, files: { 'clamp.go': fix, 'clamp_test.go': test(true) } },
      ],
      failToPass: ['example.com/clamp::TestAbove'],
      passToPass: ['example.com/clamp::TestBelow', 'example.com/clamp::TestInside'],
    };
  })(),
  ((): RunnerRepo => {
    const bug = '/// x within [lo, hi].\npub fn clamp(x: i64, lo: i64, hi: i64) -> i64 {\n    let _ = hi;\n    x.max(lo)\n}\n';
    const fix = '/// x within [lo, hi].\npub fn clamp(x: i64, lo: i64, hi: i64) -> i64 {\n    x.max(lo).min(hi)\n}\n';
    const test = (above: boolean) =>
      `use clamp::clamp;\n\n#[test]\nfn inside() {\n    assert_eq!(clamp(5, 0, 10), 5);\n}\n\n#[test]\nfn below() {\n    assert_eq!(clamp(-3, 0, 10), 0);\n}\n${above ? '\n#[test]\nfn above() {\n    assert_eq!(clamp(15, 0, 10), 10);\n}\n' : ''}`;
    return {
      runner: 'cargo',
      history: [
        {
          message: 'Add clamp',
          files: {
            'Cargo.toml': '[package]\nname = "clamp"\nversion = "0.1.0"\nedition = "2021"\n',
            'src/lib.rs': bug,
            'tests/clamp.rs': test(false),
            '.gitignore': 'target\n',
          },
        },
        { message: 'Describe clamp in the README', files: { 'README.md': '# clamp\n' } },
        { message: MESSAGE, files: { 'src/lib.rs': fix, 'tests/clamp.rs': test(true) } },
      ],
      failToPass: ['tests/clamp.rs::above'],
      passToPass: ['tests/clamp.rs::below', 'tests/clamp.rs::inside'],
    };
  })(),
];
