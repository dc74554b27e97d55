import { afterEach, describe, expect, test } from 'vitest';
import { diffTrees } from '../../harness/fixtures/scaffold.js';
import { makeProject, selfcheckProject, type Project } from '../helpers/project.js';
import { hasToolchain } from '../helpers/toolchains.js';

// Inline Go, Rust and JUnit fixtures through the real scheduler and local backend: RED, the
// oracle, GREEN, with the ids each adapter promises. Needs go (>=1.19), cargo, python3 -m pytest.

let project: Project | undefined;
afterEach(async () => {
  await project?.cleanup();
  project = undefined;
});

const sorted = (o: { failToPass: string[]; passToPass: string[] } | null | undefined) =>
  o && { failToPass: [...o.failToPass].sort(), passToPass: [...o.passToPass].sort() };

// ---------------------------------------------------------------- go: a module with no dependency
const GO_FILES = {
  'go.mod': 'module example.com/calc\n\ngo 1.19\n',
  'calc.go': 'package calc\n\n// Add returns a + b.\nfunc Add(a, b int) int { return a - b }\n',
  'calc_test.go': `package calc

import (
	"fmt"
	"testing"
)

func TestAdd(t *testing.T) {
	if got := Add(2, 3); got != 5 {
		t.Errorf("Add(2, 3) = %d, want 5", got)
	}
}

func TestZero(t *testing.T) {
	fmt.Println("printed by TestZero")
	if Add(4, 0) != 4 {
		t.Fatal("Add(4, 0) != 4")
	}
}

func TestTable(t *testing.T) {
	for _, c := range []struct {
		name       string
		a, b, want int
	}{{"zero", 0, 0, 0}, {"two and three", 2, 3, 5}} {
		t.Run(c.name, func(t *testing.T) {
			if got := Add(c.a, c.b); got != c.want {
				t.Errorf("got %d, want %d", got, c.want)
			}
		})
	}
}
`,
};
const GO_FIX = { 'calc.go': 'package calc\n\n// Add returns a + b.\nfunc Add(a, b int) int { return a + b }\n' };
const GO_TESTS = {
  failToPass: ['example.com/calc::TestAdd', 'example.com/calc::TestTable', 'example.com/calc::TestTable/two_and_three'],
  passToPass: ['example.com/calc::TestTable/zero', 'example.com/calc::TestZero'],
};
const goManifest = (command: string) => ({
  language: 'go',
  runner: 'go',
  test: { command, timeoutSec: 120 },
  tests: GO_TESTS,
  protected: ['*_test.go'],
});

// ---------------------------------------------------------------- cargo: a crate with no dependency
const CARGO_FILES = {
  'Cargo.toml': '[package]\nname = "calc"\nversion = "0.1.0"\nedition = "2021"\n\n[dependencies]\n',
  'src/lib.rs': `/// Adds two numbers.
///
/// \`\`\`
/// assert_eq!(calc::add(2, 3), 5);
/// \`\`\`
pub fn add(a: i32, b: i32) -> i32 {
    a - b
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn adds() {
        assert_eq!(add(2, 3), 5);
    }

    #[test]
    fn zero() {
        println!("printed by zero");
        assert_eq!(add(4, 0), 4);
    }
}
`,
  'tests/it.rs':
    '#[test]\nfn adds_small() {\n    assert_eq!(calc::add(1, 1), 2);\n}\n\n#[test]\nfn zero_is_identity() {\n    assert_eq!(calc::add(7, 0), 7);\n}\n',
};
// The fix also moves the doc-test down a line: its id has no line number, so it stays the same.
const CARGO_FIX = {
  'src/lib.rs': CARGO_FILES['src/lib.rs']
    .replace('/// Adds two numbers.\n', '/// Adds two numbers\n/// (the sum of a and b).\n')
    .replace('a - b', 'a + b'),
};
const CARGO_TESTS = {
  failToPass: ['doc::src/lib.rs - add', 'lib::tests::adds', 'tests/it.rs::adds_small'],
  passToPass: ['lib::tests::zero', 'tests/it.rs::zero_is_identity'],
};

// ---------------------------------------------------------------- junit: any tool writing JUnit XML
const PY_FILES = {
  'calc.py': 'def add(a, b):\n    return a - b\n',
  'test_calc.py': 'from calc import add\n\ndef test_add():\n    assert add(2, 3) == 5\n\ndef test_zero():\n    assert add(4, 0) == 4\n',
};
const PY_FIX = { 'calc.py': 'def add(a, b):\n    return a + b\n' };

/** A missing toolchain skips its tests on a developer's machine; in CI (CI=true) it is a failure. */
function toolchain(cmd: string) {
  const missing = !hasToolchain(cmd);
  if (missing && process.env.CI)
    throw new Error(`CI must run the ${cmd} runner's tests, but \`${cmd} version\` fails: install it in .ci/run`);
  return test.skipIf(missing);
}
const withGo = toolchain('go');
const withCargo = toolchain('cargo');

describe('go, cargo and junit runners: selfcheck through the real pipeline', () => {
  withGo(
    'a Go module, as a plain go test (-json) and wrapped in a shell command (verbose text)',
    async () => {
      const oracle = await diffTrees(GO_FILES, GO_FIX);
      project = await makeProject({
        go_plain: { manifest: goManifest('go test ./...'), files: GO_FILES, oracle },
        go_wrapped: { manifest: goManifest('cd . && go test ./...'), files: GO_FILES, oracle },
      });
      const { byId } = await selfcheckProject(project);
      for (const id of ['go_plain', 'go_wrapped']) {
        expect(byId[id]!.reason).toBe('3 fail→pass, 2 pass→pass');
        expect(byId[id]!.verdict).toBe('valid');
        expect(sorted(byId[id]!.observed)).toEqual(GO_TESTS);
      }
      expect(byId.go_plain!.red?.source).toBe('json');
      expect(byId.go_wrapped!.red?.source).toBe('stdout');
    },
    120_000,
  );

  withGo(
    'a Go package that does not build is a broken RED, not "no tests"',
    async () => {
      const files = { ...GO_FILES, 'calc.go': 'package calc\n\nfunc Add(a, b int) int { return a - undefinedName }\n' };
      // Nothing ran before the fix, so every test is fail→pass and none pass→pass.
      const tests = { failToPass: [...GO_TESTS.failToPass, ...GO_TESTS.passToPass].sort(), passToPass: [] };
      project = await makeProject({
        go_broken: { manifest: { ...goManifest('go test ./...'), tests }, files, oracle: await diffTrees(files, GO_FIX) },
      });
      const { byId } = await selfcheckProject(project);
      expect(byId.go_broken!.red?.tests).toEqual([
        { id: 'example.com/calc', status: 'error', message: './calc.go:3:37: undefined: undefinedName' },
      ]);
      expect(byId.go_broken!.red?.state).toBe('fail');
      expect(byId.go_broken!.verdict).toBe('valid');
      expect(sorted(byId.go_broken!.observed)).toEqual(tests);
    },
    120_000,
  );

  withCargo(
    'a Rust crate: unit tests, an integration test and a doc-test',
    async () => {
      project = await makeProject({
        rust: {
          manifest: {
            language: 'rust',
            runner: 'cargo',
            test: { command: 'cargo test --offline', timeoutSec: 300 },
            tests: CARGO_TESTS,
            protected: ['tests/*.rs'],
          },
          files: CARGO_FILES,
          oracle: await diffTrees(CARGO_FILES, CARGO_FIX),
        },
      });
      const { byId } = await selfcheckProject(project);
      expect(byId.rust!.reason).toBe('3 fail→pass, 2 pass→pass');
      expect(byId.rust!.verdict).toBe('valid');
      expect(sorted(byId.rust!.observed)).toEqual(CARGO_TESTS);
    },
    300_000,
  );

  test('a JUnit report at test.reportPath, read after each run', async () => {
    project = await makeProject({
      junit: {
        manifest: {
          runner: 'junit',
          test: {
            command: 'python3 -m pytest -q -p no:cacheprovider --junitxml=reports/junit.xml',
            timeoutSec: 60,
            reportPath: 'reports/junit.xml',
          },
          tests: { failToPass: ['test_calc::test_add'], passToPass: ['test_calc::test_zero'] },
          protected: ['test_*.py'],
        },
        files: PY_FILES,
        oracle: await diffTrees(PY_FILES, PY_FIX),
      },
    });
    const { byId } = await selfcheckProject(project);
    expect(byId.junit!.verdict).toBe('valid');
    expect(byId.junit!.red?.source).toBe('junit');
    expect(sorted(byId.junit!.observed)).toEqual({ failToPass: ['test_calc::test_add'], passToPass: ['test_calc::test_zero'] });
  }, 60_000);
});
