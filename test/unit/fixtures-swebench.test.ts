import { describe, expect, test } from 'vitest';
import { changedLines } from '../../harness/fixtures/commit-diff.js';
import { HarborTaskSchema, taskToml } from '../../harness/fixtures/harbor-export.js';
import { isUrl, mirrorName } from '../../harness/fixtures/mirror.js';
import { specFor } from '../../harness/fixtures/repo-spec.js';
import { readInstances, toRedgreenId, toSweBenchId } from '../../harness/fixtures/swebench.js';
import { repoName } from '../../harness/fixtures/swebench-export.js';
import { SpecExport } from '../../harness/fixtures/swebench-spec-export.js';
import type { Fixture } from '../../harness/fixtures/load.js';

const instance = (over: Record<string, unknown> = {}) => ({
  instance_id: 'acme__kit-1',
  repo: 'acme/kit',
  base_commit: 'a'.repeat(40),
  patch: 'diff --git a/x b/x\n',
  test_patch: '',
  problem_statement: 'it breaks',
  FAIL_TO_PASS: '["t.py::test_a"]',
  PASS_TO_PASS: [],
  ...over,
});

describe('SWE-bench instances', () => {
  test('test lists come as JSON strings or arrays; other fields are kept', () => {
    const [r] = readInstances(JSON.stringify(instance({ hints_text: 'h', extra: 1 })), 'i.jsonl');
    expect(r!.problem).toBeUndefined();
    expect(r!.instance).toMatchObject({ FAIL_TO_PASS: ['t.py::test_a'], PASS_TO_PASS: [], hints_text: 'h', extra: 1 });
    expect(r!.raw!.FAIL_TO_PASS).toBe('["t.py::test_a"]');
  });

  test('a broken instance says where and which fields; a JSON array is read whole', () => {
    const { patch: _p, ...noPatch } = instance();
    const text = [JSON.stringify(instance()), JSON.stringify({ ...noPatch, FAIL_TO_PASS: 'not json' }), '{'].join('\n');
    const read = readInstances(text, 'i.jsonl');
    expect(read.map((r) => r.where)).toEqual(['i.jsonl:1', 'i.jsonl:2', 'i.jsonl:3']);
    expect(read[1]!.problem).toMatch(/field "patch": missing; field "FAIL_TO_PASS": must be a list of test ids, or a JSON string of one/);
    expect(read[2]!.problem).toMatch(/^not valid JSON/);
    const array = readInstances(JSON.stringify([instance(), instance({ instance_id: 'bad id' })]), 'i.json');
    expect(array.map((r) => [r.where, !!r.instance])).toEqual([
      ['i.json[0]', true],
      ['i.json[1]', false],
    ]);
  });

  test("unittest ids map between Django's form and redgreen's, both ways; pytest ids are the same", () => {
    expect(toRedgreenId('unittest', 'test_rounding (money.tests.TestCents)')).toBe('money.tests.TestCents.test_rounding');
    expect(toRedgreenId('unittest', 'test_rounding (money.tests.TestCents)\nRounds half up.')).toBe('money.tests.TestCents.test_rounding');
    expect(toSweBenchId('unittest', 'money.tests.TestCents.test_rounding')).toBe('test_rounding (money.tests.TestCents)');
    expect(toRedgreenId('pytest', 'tests/t.py::TestK::test_m[a b]')).toBe('tests/t.py::TestK::test_m[a b]');
    expect(toSweBenchId('pytest', 'tests/t.py::test_m')).toBe('tests/t.py::test_m');
  });
});

describe('repositories and specs', () => {
  test('URLs, mirror names and repository names', () => {
    expect(isUrl('https://github.com/acme/kit.git')).toBe(true);
    expect(isUrl('file:///tmp/kit')).toBe(true);
    expect(isUrl('git@github.com:acme/kit.git')).toBe(true);
    expect(isUrl('../kit')).toBe(false);
    expect(mirrorName('https://github.com/acme/kit.git')).toMatch(/^github\.com_acme_kit-[0-9a-f]{8}$/);
    expect(mirrorName('https://github.com/acme/kit.git')).not.toBe(mirrorName('https://gitlab.com/acme/kit.git'));
    expect(repoName('https://github.com/acme/kit.git')).toBe('acme/kit');
    expect(repoName('git@github.com:acme/kit.git')).toBe('acme/kit');
    expect(repoName('/home/me/src/kit')).toBe('local/kit');
  });

  test("a version's spec fields override the repository's", () => {
    const file = {
      'acme/kit': {
        runner: 'pytest' as const,
        test: { command: 'pytest -q', timeoutSec: 60 },
        versions: { '2.0': { test: { command: 'pytest -q tests' } } },
      },
    };
    expect(specFor(file, 'acme/kit', '1.0')).toEqual({ runner: 'pytest', test: { command: 'pytest -q', timeoutSec: 60 } });
    expect(specFor(file, 'acme/kit', '2.0')).toEqual({ runner: 'pytest', test: { command: 'pytest -q tests', timeoutSec: 60 } });
    expect(specFor(file, 'acme/other', '1.0')).toBeNull();
  });

  test('changed lines of a diff', () => {
    expect(changedLines('diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1 +1,2 @@\n-a\n+b\n+c\n')).toBe(3);
  });
});

test('task.toml holds its tables in TOML', () => {
  const task = HarborTaskSchema.parse({
    schema_version: '1.3',
    task: { name: 'redgreen/x', description: 'A bug', keywords: ['redgreen', 'pytest'] },
    metadata: { author_name: 'redgreen', category: 'debugging', tags: ['redgreen', 'pytest'], redgreen_fixture: 'x', runner: 'pytest' },
    verifier: { timeout_sec: 180 },
    agent: { timeout_sec: 1800 },
    environment: { build_timeout_sec: 600, cpus: 2, memory_mb: 4096, storage_mb: 10240 },
  });
  expect(taskToml(task)).toBe(
    'schema_version = "1.3"\n\n[task]\nname = "redgreen/x"\ndescription = "A bug"\nkeywords = ["redgreen", "pytest"]\n\n[metadata]\nauthor_name = "redgreen"\ncategory = "debugging"\ntags = ["redgreen", "pytest"]\nredgreen_fixture = "x"\nrunner = "pytest"\n\n' +
      '[verifier]\ntimeout_sec = 180\n\n[agent]\ntimeout_sec = 1800\n\n[environment]\nbuild_timeout_sec = 600\ncpus = 2\nmemory_mb = 4096\nstorage_mb = 10240\n',
  );
});

describe('the spec file export writes', () => {
  const fixture = (id: string, command: string) =>
    ({
      id,
      manifest: { runner: 'pytest', language: 'python', test: { command, timeoutSec: 60 }, env: {}, protected: [] },
    }) as unknown as Fixture;

  test('one entry per repository, a version of its own where fixtures of one repository run otherwise, a conflict named', () => {
    const specs = new SpecExport();
    specs.add(fixture('a', 'pytest -q'), { repo: 'acme/kit', version: '1.0' });
    specs.add(fixture('b', 'pytest -q'), { repo: 'acme/kit', version: '1.0' });
    specs.add(fixture('c', 'pytest -q tests'), { repo: 'acme/kit', version: '2.0' });
    specs.add(fixture('d', 'pytest -x'), { repo: 'acme/kit', version: '2.0' });
    expect(specs.conflicts).toEqual(['d']);
    expect(specFor(specs.file, 'acme/kit', '1.0')?.test?.command).toBe('pytest -q');
    expect(specFor(specs.file, 'acme/kit', '2.0')?.test?.command).toBe('pytest -q tests');
    expect(specs.file['acme/kit']).toMatchObject({ runner: 'pytest', language: 'python', test: { timeoutSec: 60 } });
  });
});
