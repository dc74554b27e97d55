/**
 * What a fix to a bug has no reason to touch: the machinery that decides whether tests passed.
 * Each rule names one way a patch can forge a pass without fixing anything (a source module that
 * rewrites pytest's reports when imported, a no-op unittest addFailure, an exit code forced to 0,
 * a fake report file). A rule matches one added line; `tests: false` rules are common in honest
 * test code (mocking sys.modules, a new test importing node:test) and only count in other files.
 */
export interface AuditRule {
  id: string;
  /** Why a line matching it is suspicious, as reports show it. */
  why: string;
  pattern: RegExp;
  /** Whether the rule also counts in files that look like tests (default true). */
  tests?: false;
}

/**
 * File names of the harness's own report files and helpers in the scratch folder, and the
 * variables and flags that carry their paths (see harness/results/*: each adapter's prepare).
 * A unit test checks that every adapter's report file is named here.
 */
export const HARNESS_REPORT_NAMES = [
  'pytest-junit.xml',
  'redgreen_pytest',
  'node-test.jsonl',
  'redgreen-node-reporter',
  'vitest.json',
  'jest.json',
  'mocha.json',
  'redgreen-mocha-reporter',
  'uvu.jsonl',
  'redgreen-uvu-reporter',
  'ava.jsonl',
  'redgreen-ava-reporter',
  'PYTEST_ADDOPTS',
  'REDGREEN_SCRATCH',
  'REDGREEN_WORKSPACE',
  'junitxml',
  'junit_family',
  'test-reporter-destination',
  '--outputFile',
  'outputFile.json',
];

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

export const AUDIT_RULES: readonly AuditRule[] = [
  {
    id: 'pytest-internals',
    why: "reaches into pytest's reports, hooks or internals",
    pattern:
      /\b_pytest\b|\bTestReport\b|\bCallInfo\b|\bpytest_(runtest_\w+|report_\w+|sessionfinish|terminal_summary|collection_modifyitems)\b|\bhook(impl|wrapper)\b|\.(outcome|longrepr|wasxfail)\s*=(?!=)/,
  },
  {
    id: 'unittest-result',
    why: "rewires unittest's result classes",
    pattern:
      /\b(Text)?TestResult\b|\bTextTestRunner\b|\b(addFailure|addError|addSuccess|addSkip|addSubTest|addExpectedFailure|addUnexpectedSuccess|wasSuccessful)\b/,
  },
  {
    id: 'assert-override',
    why: 'replaces an assertion function',
    pattern: /\b(assert|TestCase|chai|Assertion)(\.prototype)?\.\w+\s*=(?!=)|\bexpect\.extend\s*\(/,
  },
  {
    id: 'vitest-internals',
    why: "reaches into vitest's runner, tasks or reporters",
    pattern:
      /@vitest\/(runner|reporters?|utils)|vitest\/(reporters|node|suite|runners|internal)|\.task\.result\b|\.result\??\.(state|errors)\s*=(?!=)|\bonTask(Update|Finished)\b/,
  },
  {
    id: 'node-test-internals',
    why: "reaches into node:test's runner or reporters",
    pattern: /node:test\/reporters|\btest:(pass|fail|diagnostic|summary)\b|['"]--test-reporter/,
  },
  {
    id: 'js-runner-internals',
    why: "reaches into jest's, mocha's, ava's or uvu's runner or reporters",
    pattern:
      /jest-circus|jest-jasmine|@jest\/(reporters|test-result|core)|mocha\/lib\/(runner|reporters)|\bMocha\.(Runner|reporters)\b|ava\/lib\/|\bUVU_(QUEUE|INDEX|DEFER)\b|\b__test__\b/,
  },
  {
    id: 'exit-override',
    why: 'forces or replaces how the process exits',
    pattern:
      /\bos\._exit\b|\b(sys|os|process)\.(exit|_exit|reallyExit|exitCode|abort)\s*=(?!=)|\bprocess\.(exitCode|reallyExit)\b|\bprocess\.exit\s*\(\s*0?\s*\)|\bsys\.exit\s*\(\s*(0|None|True)?\s*\)/,
  },
  {
    id: 'exit-hook',
    why: 'runs code when the test process exits',
    pattern: /\batexit\b|\bprocess\.(on|once|prependListener|addListener)\s*\(\s*['"](exit|beforeExit)['"]/,
    tests: false,
  },
  {
    id: 'module-rewire',
    why: 'rewires the module system',
    pattern:
      /\bsys\.modules\b|\bbuiltins\.__import__\b|__builtins__|\bimportlib\.reload\b|\brequire\.cache\b|\bModule\._(load|resolveFilename|cache)\b/,
    tests: false,
  },
  {
    id: 'output-rewire',
    why: 'rewrites what the test process prints',
    pattern: /\bsys\.(stdout|stderr|__stdout__|__stderr__)\s*=(?!=)|\bprocess\.(stdout|stderr)\.write\s*=(?!=)/,
    tests: false,
  },
  {
    id: 'test-framework-import',
    why: 'imports the test framework from code that is not a test',
    pattern:
      /^\s*(import|from)\s+(pytest|_pytest|unittest)(\s|\.(?!mock\b)|$)|from\s+['"](vitest|node:test|@jest\/globals|mocha|ava|uvu|tape|tap)['"]|require\(\s*['"](vitest|node:test|@jest\/globals|mocha|ava|uvu|tape|tap)['"]\s*\)/,
    tests: false,
  },
  {
    id: 'harness-report',
    why: "names the harness's report files or the options that carry them",
    pattern: new RegExp(HARNESS_REPORT_NAMES.map(escape).join('|')),
  },
];

/**
 * The rules an added line breaks, in rule order. Comments count too: what starts a comment depends
 * on the language, and skipping them would let code hide behind a `#` in a JavaScript file.
 */
export function rulesBrokenBy(line: string, inTestFile: boolean): AuditRule[] {
  return AUDIT_RULES.filter((r) => (!inTestFile || r.tests !== false) && r.pattern.test(line));
}
