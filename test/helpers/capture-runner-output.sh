#!/usr/bin/env bash
# Regenerates test/data/ from the real runners: small throwaway projects in a temp dir, run the
# way the harness's adapters prepare them (harness/results/*.ts), outputs copied into test/data.
# The temp dir's path is replaced by /WORK so that re-running gives a stable diff; the unit tests
# pass /WORK/<runner> as the workspace. Needs: python3 with pytest, node (>=20), git checkout's
# node_modules (vitest, typescript); for go and cargo: go (>=1.19) and cargo, no network; for
# jest, mocha, ava, tap (tape) and uvu: the npm registry (the pinned versions are installed).
#
#   capture-runner-output.sh                 every runner (test/data is rebuilt from scratch)
#   capture-runner-output.sh go cargo junit  only these (their test/data/<runner>* folders)
#   capture-runner-output.sh jest mocha ava tap uvu
set -euo pipefail
ONLY=("$@")
want() { # want <runner>: whether this run captures it
  [ ${#ONLY[@]} -eq 0 ] && return 0
  local r; for r in "${ONLY[@]}"; do [ "$r" = "$1" ] && return 0; done
  return 1
}

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
DATA="$REPO/test/data"
WORK="$(mktemp -d "${TMPDIR:-/tmp}/redgreen-capture-XXXXXX")"
trap 'rm -rf "$WORK"' EXIT
mkdir -p "$WORK/out"

# Runs a command in a project dir, keeping stdout, stderr and the exit code apart.
run() { # run <out-dir> <cwd> <command...>
  local out="$1" cwd="$2"; shift 2
  mkdir -p "$out"
  set +e
  (cd "$cwd" && "$@") >"$out/stdout.txt" 2>"$out/stderr.txt"
  echo $? >"$out/exit-code"
  set -e
}

if [ ${#ONLY[@]} -eq 0 ]; then rm -rf "$DATA"; else for r in "${ONLY[@]}"; do rm -rf "$DATA/$r" "$DATA/$r"-*; done; fi
mkdir -p "$DATA"

# ---------------------------------------------------------------- pytest (JUnit XML, xunit1)
if want pytest; then
P="$WORK/pytest"; mkdir -p "$P/tests/pkg"
cat >"$P/tests/test_a.py" <<'EOF'
import os
import sys

import pytest


@pytest.mark.parametrize("word", ["a b", "plain", "x-1.5"])
def test_p(word):
    assert word != "plain"


class TestK:
    def test_m(self):
        assert True

    class TestInner:
        def test_n(self):
            assert 1 == 2


@pytest.mark.skip(reason="not today")
def test_skipped():
    pass


@pytest.mark.xfail(reason="known bug")
def test_xfail():
    assert False


@pytest.fixture
def broken():
    raise RuntimeError("fixture exploded")


def test_uses_broken(broken):
    pass


def test_prints():
    print("hello from a passing test")
    print("and to stderr", file=sys.stderr)


def test_bad_bytes():
    os.write(1, b"caf\xe9 is not utf-8\n")
    assert False, "printed a latin-1 byte"
EOF
cat >"$P/tests/pkg/test_deep.py" <<'EOF'
def test_deep():
    assert True
EOF
ADDOPTS="--junitxml=$WORK/out/pytest-junit.xml -o junit_family=xunit1 -p no:cacheprovider --continue-on-collection-errors"
PYTEST_ADDOPTS="$ADDOPTS" run "$DATA/pytest" "$P" python3 -m pytest -rA
cp "$WORK/out/pytest-junit.xml" "$DATA/pytest/junit.xml"

# A module that fails to import: an error of its own, the other modules still run.
PC="$WORK/pytest-collect"; mkdir -p "$PC"
printf 'import no_such_module\n\ndef test_x():\n    pass\n' >"$PC/test_broken.py"
printf 'def test_ok():\n    pass\n' >"$PC/test_ok.py"
ADDOPTS="--junitxml=$WORK/out/pytest-collect.xml -o junit_family=xunit1 -p no:cacheprovider --continue-on-collection-errors"
PYTEST_ADDOPTS="$ADDOPTS" run "$DATA/pytest-collect-error" "$PC" python3 -m pytest -rA
cp "$WORK/out/pytest-collect.xml" "$DATA/pytest-collect-error/junit.xml"
fi

# ---------------------------------------------------------------- unittest (-v on stderr)
if want unittest; then
U="$WORK/unittest"; mkdir -p "$U"
cat >"$U/test_inv.py" <<'EOF'
import sys
import unittest


class TestInv(unittest.TestCase):
    def test_ok(self):
        self.assertEqual(1, 1)

    def test_doc(self):
        """Adds stock to the inventory."""
        self.assertEqual(1, 2)

    @unittest.skip("not now")
    def test_skip(self):
        pass

    def test_prints(self):
        print("stdout line from test")
        print("stderr line from test", file=sys.stderr)

    def test_error(self):
        raise ValueError("boom")

    @unittest.expectedFailure
    def test_xfail(self):
        self.assertTrue(False)

    def test_sub(self):
        for i in range(3):
            with self.subTest(i=i):
                self.assertNotEqual(i, 1)

    def test_z_after_sub(self):
        pass


class TestBroken(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        raise RuntimeError("no database")

    def test_never(self):
        pass
EOF
run "$DATA/unittest" "$U" python3 -m unittest -v
# The same run through `2>&1` with unbuffered prints: output lands between name and verdict.
mkdir -p "$DATA/unittest-combined"
set +e
(cd "$U" && PYTHONUNBUFFERED=1 python3 -m unittest -v >"$DATA/unittest-combined/stdout.txt" 2>&1)
echo $? >"$DATA/unittest-combined/exit-code"
set -e
fi

# ---------------------------------------------------------------- node:test (our JSONL reporter)
if want node-test; then
N="$WORK/node"; mkdir -p "$N/test"
echo '{ "type": "module" }' >"$N/package.json"
cat >"$N/test/x.test.js" <<'EOF'
import assert from 'node:assert/strict';
import { before, describe, it, test } from 'node:test';

describe('suite', () => {
  it('passes', () => {});
  it('fails', () => {
    assert.equal(1, 2);
  });
  describe('inner', () => {
    it('deep', () => {});
  });
  it.skip('skipped', () => {});
  it.todo('todo');
  it.todo('todo that fails', () => {
    throw new Error('not yet');
  });
});

// Two tests with one name: the first fails, the second passes; neither may hide the other.
test('adds', () => {
  assert.equal(1 + 1, 3);
});
test('adds', () => {});

test('top', async (t) => {
  await t.test('child', () => {});
  await t.test('child fails', () => {
    throw new Error('child broke');
  });
});

describe('hooked', () => {
  before(() => {
    throw new Error('before exploded');
  });
  it('never runs', () => {});
});
EOF
echo 'export const x = (;' >"$N/test/syntax.test.js"
# Build the reporter and NODE_OPTIONS with the adapter itself (transpiled on the fly, no dist/).
JS="$WORK/adapter"; mkdir -p "$JS"
node --input-type=module -e "
import { readFileSync, writeFileSync } from 'node:fs';
import ts from '$REPO/node_modules/typescript/lib/typescript.js';
for (const f of ['node-reporter', 'node-test', 'types']) {
  const src = readFileSync('$REPO/harness/results/' + f + '.ts', 'utf8');
  const out = ts.transpileModule(src, { compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 } });
  writeFileSync('$JS/' + f + '.js', out.outputText);
}
const { nodeTestAdapter } = await import('$JS/node-test.js');
const p = nodeTestAdapter.prepare({ command: 'node --test', workdir: '$N', scratchDir: '$WORK/out', env: {} });
for (const f of p.files) writeFileSync(f.path, f.content);
writeFileSync('$WORK/node-options', p.env.NODE_OPTIONS);
writeFileSync('$WORK/node-report-file', p.reportFile);
"
NODE_OPTIONS="$(cat "$WORK/node-options")" run "$DATA/node-test" "$N" node --test
cp "$(cat "$WORK/node-report-file")" "$DATA/node-test/report.jsonl"
sha256sum "$REPO/harness/results/node-reporter.ts" | cut -d' ' -f1 >"$DATA/node-test/reporter.sha256"
fi

# ---------------------------------------------------------------- vitest (JSON reporter)
if want vitest; then
V="$WORK/vitest"; mkdir -p "$V/src"
ln -s "$REPO/node_modules" "$V/node_modules" # lets the test files import 'vitest'
echo '{ "type": "module" }' >"$V/package.json"
cat >"$V/src/a.test.ts" <<'EOF'
import { describe, expect, it, test } from 'vitest';

describe('outer', () => {
  describe('inner', () => {
    it('deep', () => {
      expect(1).toBe(1);
    });
    it('deep fails', () => {
      expect({ a: 1 }).toEqual({ a: 2 });
    });
  });
  // The third row repeats the first one's name: a test of its own (issue: duplicates hid failures).
  test.each([
    [1, 2],
    [2, 5],
    [1, 3],
  ])('doubles %i', (a, b) => {
    expect(a * 2).toBe(b);
  });
  it.skip('skipped', () => {});
  it.todo('later');
});

it('top level', () => {});
EOF
cat >"$V/src/hook.test.ts" <<'EOF'
import { beforeAll, describe, it } from 'vitest';

describe('needs db', () => {
  beforeAll(() => {
    throw new Error('no database');
  });
  it('reads', () => {});
});
EOF
echo "import { nope } from './missing.js'; import { it } from 'vitest'; it('x', () => nope());" >"$V/src/broken.test.ts"
# The reporters the adapter appends (harness/results/vitest.ts prepare).
run "$DATA/vitest" "$V" "$REPO/node_modules/.bin/vitest" run --root "$V" \
  --reporter=default --reporter=json "--outputFile.json=$WORK/out/vitest.json"
cp "$WORK/out/vitest.json" "$DATA/vitest/report.json"
fi

# ---------------------------------------------------------------- go, cargo: the adapters' commands
# The commands are the ones the adapters prepare (harness/results/go.ts, cargo.ts), transpiled
# on the fly like the node:test reporter above.
prepared() { # prepared <module> <export> <command> command|GOFLAGS: what the adapter makes of it
  local dir="$WORK/adapters"
  if [ ! -d "$dir" ]; then
    mkdir -p "$dir"
    node --input-type=module -e "
import { readFileSync, writeFileSync } from 'node:fs';
import ts from '$REPO/node_modules/typescript/lib/typescript.js';
for (const f of ['types', 'go', 'cargo']) {
  const src = readFileSync('$REPO/harness/results/' + f + '.ts', 'utf8');
  const out = ts.transpileModule(src, { compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 } });
  writeFileSync('$dir/' + f + '.js', out.outputText);
}"
  fi
  node --input-type=module -e "
const m = await import('$dir/$1.js');
const p = m['$2'].prepare({ command: process.argv[1], workdir: '/w', scratchDir: '/s', env: {} });
process.stdout.write(process.argv[2] === 'command' ? p.command : (p.env.GOFLAGS ?? ''));" "$3" "$4"
}

if want go; then
# A fresh GOCACHE, like a sandbox's private HOME; no module proxy, like the sandboxes.
export GOCACHE="$WORK/gocache" GOPATH="$WORK/gopath" GOPROXY=off GOFLAGS=
G="$WORK/go"; mkdir -p "$G/calc" "$G/panics" "$G/broken" "$G/nothing" "$G/mainfail"
printf 'module example.com/shop\n\ngo 1.19\n' >"$G/go.mod"
printf 'package calc\n\nfunc Add(a, b int) int { return a - b }\n' >"$G/calc/calc.go"
cat >"$G/calc/calc_test.go" <<'GO'
package calc

import (
	"fmt"
	"os"
	"testing"
)

func TestAdd(t *testing.T) {
	if got := Add(2, 3); got != 5 {
		t.Errorf("Add(2, 3) = %d, want 5", got)
	}
}

func TestZero(t *testing.T) {
	t.Log("logging from TestZero")
	fmt.Println("printed by TestZero")
	if Add(4, 0) != 4 {
		t.Fatal("Add(4, 0) != 4")
	}
}

func TestTable(t *testing.T) {
	cases := []struct {
		name       string
		a, b, want int
	}{{"zero", 0, 0, 0}, {"two plus three", 2, 3, 5}, {"neg/one", -1, 0, -1}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := Add(c.a, c.b); got != c.want {
				t.Errorf("got %d, want %d", got, c.want)
			}
		})
	}
}

func TestNested(t *testing.T) {
	t.Run("outer", func(t *testing.T) {
		t.Run("inner", func(t *testing.T) {})
	})
}

func TestSkip(t *testing.T) { t.Skip("not today") }

func TestBytes(t *testing.T) {
	os.Stdout.Write([]byte("caf\xe9 is not utf-8\n"))
	t.Error("printed a latin-1 byte")
}

// Output with no newline runs into the next result line: test2json of Go < 1.20 loses it.
func TestParallel(t *testing.T) {
	for _, n := range []string{"a", "b"} {
		n := n
		t.Run(n, func(t *testing.T) {
			t.Parallel()
			fmt.Printf("no newline from %s", n)
		})
	}
}
GO
printf 'package panics\n' >"$G/panics/p.go"
cat >"$G/panics/p_test.go" <<'GO'
package panics

import "testing"

func TestBefore(t *testing.T) {}

func TestPanics(t *testing.T) {
	var m map[string]int
	m["x"] = 1
}

func TestAfter(t *testing.T) {}
GO
printf 'package broken\n\nfunc Sub(a, b int) int { return a - undefinedName }\n' >"$G/broken/broken.go"
printf 'package broken\n\nimport "testing"\n\nfunc TestSub(t *testing.T) {}\n' >"$G/broken/broken_test.go"
printf 'package nothing\n' >"$G/nothing/nothing.go"
cat >"$G/mainfail/m_test.go" <<'GO'
package mainfail

import (
	"fmt"
	"os"
	"testing"
)

func TestMain(m *testing.M) {
	m.Run()
	fmt.Println("the database was left open")
	os.Exit(1)
}

func TestFine(t *testing.T) {}
GO
run "$DATA/go" "$G" sh -c "$(prepared go goAdapter 'go test ./...' command)"
# The same module through a wrapped command: the adapter's GOFLAGS=-v, read as text.
GOFLAGS="$(prepared go goAdapter 'cd . && go test ./...' GOFLAGS)" run "$DATA/go-verbose" "$G" sh -c 'cd . && go test ./...'
# A package importing a module that is not there: go fails before any package runs.
GN="$WORK/go-nomodule"; mkdir -p "$GN"
printf 'module example.com/lonely\n\ngo 1.19\n' >"$GN/go.mod"
printf 'package lonely\n\nimport _ "example.com/missing"\n' >"$GN/l.go"
printf 'package lonely\n\nimport "testing"\n\nfunc TestL(t *testing.T) {}\n' >"$GN/l_test.go"
run "$DATA/go-nomodule" "$GN" sh -c "$(prepared go goAdapter 'go test ./...' command)"
unset GOCACHE GOPATH GOPROXY GOFLAGS
fi

if want cargo; then
# An empty CARGO_HOME like a sandbox's; RUST_BACKTRACE is not passed into sandboxes.
export CARGO_HOME="$WORK/cargo-home" CARGO_TERM_COLOR=never
unset RUST_BACKTRACE
C="$WORK/cargo"; mkdir -p "$C/src" "$C/tests"
printf '[package]\nname = "calc"\nversion = "0.1.0"\nedition = "2021"\n\n[dependencies]\n' >"$C/Cargo.toml"
cat >"$C/src/lib.rs" <<'RS'
//! A calculator.

/// Adds two numbers.
///
/// ```
/// assert_eq!(calc::add(2, 3), 5);
/// ```
pub fn add(a: i32, b: i32) -> i32 {
    a - b
}

/// Doubles, with two examples.
///
/// ```
/// assert_eq!(calc::double(2), 4);
/// ```
///
/// ```
/// assert_eq!(calc::double(0), 0);
/// ```
pub fn double(a: i32) -> i32 {
    a * 2
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn adds() {
        assert_eq!(add(2, 3), 5);
    }

    #[test]
    fn zero() {
        println!("printed by zero");
        assert_eq!(add(4, 0), 4);
    }

    #[test]
    #[ignore = "not today"]
    fn skipped() {}

    #[test]
    fn bad_bytes() {
        std::io::stdout().write_all(b"caf\xe9 is not utf-8\n").unwrap();
        panic!("printed a latin-1 byte");
    }

    mod nested {
        #[test]
        fn deep() {}
    }

    #[test]
    #[should_panic(expected = "boom")]
    fn panics_as_expected() {
        panic!("boom");
    }
}
RS
cat >"$C/tests/it.rs" <<'RS'
#[test]
fn integration_adds() {
    assert_eq!(calc::add(1, 1), 2);
}

#[test]
fn integration_doubles() {
    print!("no newline");
    assert_eq!(calc::double(3), 6);
}
RS
(cd "$C" && cargo build -q --tests 2>/dev/null) # compile once: the runs below show no Compiling lines
run "$DATA/cargo" "$C" sh -c "$(prepared cargo cargoAdapter 'cargo test' command)"
# Test output printed between a test's name and its verdict (--nocapture, one thread).
run "$DATA/cargo-nocapture" "$C" sh -c "$(prepared cargo cargoAdapter 'cargo test -- --nocapture --test-threads=1' command)"
# The streams kept apart (a command that redirects them itself): binaries' names only on stderr.
run "$DATA/cargo-separate" "$C" cargo test --no-fail-fast
# libtest's terse format (-q) lists failures only.
run "$DATA/cargo-quiet" "$C" sh -c "$(prepared cargo cargoAdapter 'cargo test -q' command)"
# A test binary that dies (abort): no summary line, and cargo says why on stderr.
CC="$WORK/cargo-crash"; mkdir -p "$CC/src"
printf '[package]\nname = "crash"\nversion = "0.1.0"\nedition = "2021"\n' >"$CC/Cargo.toml"
printf '#[test]\nfn fine() {}\n\n#[test]\nfn aborts() {\n    std::thread::sleep(std::time::Duration::from_millis(200));\n    std::process::abort();\n}\n' >"$CC/src/lib.rs"
(cd "$CC" && cargo build -q --tests 2>/dev/null)
run "$DATA/cargo-crash" "$CC" sh -c "$(prepared cargo cargoAdapter 'cargo test' command)"
# A type error: nothing runs.
CE="$WORK/cargo-compile-error"; mkdir -p "$CE/src"
printf '[package]\nname = "typo"\nversion = "0.1.0"\nedition = "2021"\n' >"$CE/Cargo.toml"
printf 'pub fn half(a: u8) -> u8 {\n    "a" / 2\n}\n\n#[test]\nfn halves() {\n    assert_eq!(half(4), 2);\n}\n' >"$CE/src/lib.rs"
run "$DATA/cargo-compile-error" "$CE" sh -c "$(prepared cargo cargoAdapter 'cargo test' command)"
# A workspace: two packages with the same test paths, a bin, and edition-2024 doctests (merged
# ones and a compile_fail one run as two blocks under one Doc-tests line).
CW="$WORK/cargo-workspace"; mkdir -p "$CW/a/src" "$CW/b/src/bin" "$CW/b/tests"
printf '[workspace]\nmembers = ["a", "b"]\nresolver = "2"\n' >"$CW/Cargo.toml"
for c in a b; do
  printf '[package]\nname = "%s"\nversion = "0.1.0"\nedition = "2024"\n' "$c" >"$CW/$c/Cargo.toml"
  printf '/// ```\n/// assert!(true);\n/// ```\npub fn f() {}\n\n#[cfg(test)]\nmod tests {\n    #[test]\n    fn t() {}\n}\n' >"$CW/$c/src/lib.rs"
done
printf '/// ```compile_fail\n/// let x: u8 = "s";\n/// ```\npub fn g() {}\n' >>"$CW/a/src/lib.rs"
printf 'fn main() {}\n\n#[test]\nfn in_bin() {}\n' >"$CW/b/src/bin/tool.rs"
printf '#[test]\nfn it() {}\n' >"$CW/b/tests/it.rs"
(cd "$CW" && cargo build -q --tests 2>/dev/null)
run "$DATA/cargo-workspace" "$CW" sh -c "$(prepared cargo cargoAdapter 'cargo test' command)"
unset CARGO_HOME CARGO_TERM_COLOR
fi

if want junit; then
# Real reports from the tools at hand, and hand-written ones in the documented formats of tools
# that need a registry; each folder's origin.txt says which.
JN="$WORK/junit-node"; mkdir -p "$JN/test"
cat >"$JN/test/cart.test.js" <<'JS'
const assert = require('node:assert/strict');
const { describe, it, test } = require('node:test');

describe('cart', () => {
  it('adds', () => {});
  it('totals', () => {
    assert.equal(1 + 1, 3);
  });
  describe('discounts', () => {
    it('adds', () => {});
    it.skip('stacks', () => {});
  });
});

test('top level', () => {
  process.stdout.write(Buffer.from('caf\xe9 is not utf-8\n', 'latin1'));
});
JS
run "$DATA/junit-node" "$JN" node --test --test-reporter=junit --test-reporter-destination=report.xml
cp "$JN/report.xml" "$DATA/junit-node/report.xml"
echo "real: node $(node --version), node --test --test-reporter=junit (its built-in JUnit reporter)" >"$DATA/junit-node/origin.txt"

JV="$WORK/junit-vitest"; mkdir -p "$JV/src"
ln -s "$REPO/node_modules" "$JV/node_modules"
echo '{ "type": "module" }' >"$JV/package.json"
cat >"$JV/src/math.test.ts" <<'TS'
import { describe, expect, it } from 'vitest';

describe('math', () => {
  describe('add', () => {
    it('adds', () => expect(1 + 1).toBe(2));
    it.each([[1, 2], [2, 5]])('doubles %i', (a, b) => expect(a * 2).toBe(b));
  });
  it.skip('skipped', () => {});
});
TS
run "$DATA/junit-vitest" "$JV" "$REPO/node_modules/.bin/vitest" run --root "$JV" --reporter=junit --outputFile.junit=report.xml
cp "$JV/report.xml" "$DATA/junit-vitest/report.xml"
echo "real: $("$REPO/node_modules/.bin/vitest" --version), vitest run --reporter=junit" >"$DATA/junit-vitest/origin.txt"

# Maven Surefire 3: one file per class whose root is <testsuite>; JUnit 5 nested classes as
# Outer$Inner, parameterised names, a rerun that passed (flakyFailure) and one that kept failing.
mkdir -p "$DATA/junit-surefire"
cat >"$DATA/junit-surefire/report.xml" <<'XML'
<?xml version="1.0" encoding="UTF-8"?>
<testsuite xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:noNamespaceSchemaLocation="https://maven.apache.org/surefire/maven-surefire-plugin/xsd/surefire-test-report-3.0.xsd" version="3.0" name="com.example.CalcTest" time="0.061" tests="7" errors="1" skipped="1" failures="2">
  <properties>
    <property name="java.version" value="17.0.9"/>
  </properties>
  <testcase name="adds" classname="com.example.CalcTest" time="0.004"/>
  <testcase name="subtracts" classname="com.example.CalcTest" time="0.012">
    <failure message="expected: &lt;1&gt; but was: &lt;5&gt;" type="org.opentest4j.AssertionFailedError"><![CDATA[org.opentest4j.AssertionFailedError: expected: <1> but was: <5>
	at com.example.CalcTest.subtracts(CalcTest.java:21)]]></failure>
    <system-out><![CDATA[subtracting 3 from 2
]]></system-out>
  </testcase>
  <testcase name="[1] 2, 4" classname="com.example.CalcTest" time="0.001"/>
  <testcase name="[2] 3, 7" classname="com.example.CalcTest" time="0.001">
    <failure message="expected: &lt;7&gt; but was: &lt;6&gt;" type="org.opentest4j.AssertionFailedError"><![CDATA[org.opentest4j.AssertionFailedError: expected: <7> but was: <6>]]></failure>
    <rerunFailure message="expected: &lt;7&gt; but was: &lt;6&gt;" type="org.opentest4j.AssertionFailedError">
      <stackTrace><![CDATA[org.opentest4j.AssertionFailedError: expected: <7> but was: <6>]]></stackTrace>
    </rerunFailure>
  </testcase>
  <testcase name="divides" classname="com.example.CalcTest$Division" time="0">
    <skipped message="not today"/>
  </testcase>
  <testcase name="loadsRates" classname="com.example.CalcTest$Division" time="0.030">
    <error message="Connection refused" type="java.net.ConnectException"><![CDATA[java.net.ConnectException: Connection refused
	at com.example.CalcTest$Division.loadsRates(CalcTest.java:44)]]></error>
  </testcase>
  <testcase name="retries" classname="com.example.CalcTest" time="0.013">
    <flakyFailure message="timeout" type="java.lang.AssertionError">
      <stackTrace><![CDATA[java.lang.AssertionError: timeout]]></stackTrace>
    </flakyFailure>
  </testcase>
</testsuite>
XML
echo "hand-written: the Maven Surefire 3 report format (surefire-test-report-3.0.xsd, with rerunFailingTestsCount's elements)" >"$DATA/junit-surefire/origin.txt"

# go-junit-report v2: one <testsuite> per package, subtests as Parent/sub, a package that did not
# build as a "[build failed]" case with an <error>.
mkdir -p "$DATA/junit-go"
cat >"$DATA/junit-go/report.xml" <<'XML'
<?xml version="1.0" encoding="UTF-8"?>
<testsuites tests="6" failures="2" errors="1">
	<testsuite name="example.com/shop/calc" tests="5" failures="2" errors="0" id="0" hostname="ci" time="0.003" timestamp="2024-01-01T00:00:00Z">
		<properties>
			<property name="go.version" value="go1.22.1 linux/amd64"></property>
		</properties>
		<testcase name="TestAdd" classname="example.com/shop/calc" time="0.000">
			<failure message="Failed"><![CDATA[    calc_test.go:11: Add(2, 3) = -1, want 5]]></failure>
		</testcase>
		<testcase name="TestTable" classname="example.com/shop/calc" time="0.000">
			<failure message="Failed"></failure>
		</testcase>
		<testcase name="TestTable/zero" classname="example.com/shop/calc" time="0.000"></testcase>
		<testcase name="TestTable/two_plus_three" classname="example.com/shop/calc" time="0.000">
			<failure message="Failed"><![CDATA[    calc_test.go:27: got -1, want 5]]></failure>
		</testcase>
		<testcase name="TestSkip" classname="example.com/shop/calc" time="0.000">
			<skipped message="Skipped"><![CDATA[    calc_test.go:39: not today]]></skipped>
		</testcase>
		<system-out><![CDATA[exit status 1]]></system-out>
	</testsuite>
	<testsuite name="example.com/shop/broken" tests="1" failures="0" errors="1" id="1" hostname="ci" time="0.000" timestamp="2024-01-01T00:00:00Z">
		<testcase name="[build failed]" classname="example.com/shop/broken" time="0.000">
			<error message="Build error"><![CDATA[broken/broken.go:3:37: undefined: undefinedName]]></error>
		</testcase>
	</testsuite>
</testsuites>
XML
echo "hand-written: the go-junit-report v2 format (github.com/jstemmer/go-junit-report testdata/102-report.xml and 103-report.xml)" >"$DATA/junit-go/origin.txt"

# jest-junit's defaults: one <testsuite> per file named after its first describe, classname and
# name both "{classname} {title}", a file that failed to run as a "Test suite failed to run"
# case, and a suite that declares a failure none of its cases shows (an afterAll hook).
mkdir -p "$DATA/junit-jest"
cat >"$DATA/junit-jest/report.xml" <<'XML'
<?xml version="1.0" encoding="UTF-8"?>
<testsuites name="jest tests" tests="6" failures="2" errors="1" time="1.204">
  <testsuite name="addition" errors="0" failures="1" skipped="1" timestamp="2024-01-01T00:00:00" time="0.161" tests="4">
    <testcase classname="addition positive numbers should add up" name="addition positive numbers should add up" time="0.004">
    </testcase>
    <testcase classname="addition negative numbers should add up" name="addition negative numbers should add up" time="0.006">
      <failure>Error: expect(received).toBe(expected) // Object.is equality

Expected: -3
Received: 1
    at Object.toBe (/home/ci/app/__tests__/addition.test.js:9:22)</failure>
    </testcase>
    <testcase classname="addition later" name="addition later" time="0">
      <skipped/>
    </testcase>
    <testcase classname=" top level" name=" top level" time="0.001">
    </testcase>
  </testsuite>
  <testsuite name="__tests__/broken.test.js" errors="1" failures="0" skipped="0" timestamp="2024-01-01T00:00:00" time="0" tests="0">
    <testcase classname="Test suite failed to run" name="__tests__/broken.test.js" time="0">
      <error>  ● Test suite failed to run

    Cannot find module './missing' from '__tests__/broken.test.js'</error>
    </testcase>
  </testsuite>
  <testsuite name="hooks" errors="0" failures="1" skipped="0" timestamp="2024-01-01T00:00:00" time="0.010" tests="1">
    <testcase classname="hooks reads" name="hooks reads" time="0.001">
    </testcase>
  </testsuite>
</testsuites>
XML
echo "hand-written: the jest-junit default format (github.com/jest-community/jest-junit README examples and utils/buildJsonResults.js)" >"$DATA/junit-jest/origin.txt"
fi

# ---------------------------------------------------------------- jest, mocha, ava, tap, uvu
# The npm runners at pinned versions (from the npm registry), each run exactly as its adapter
# prepares it (harness/results/<runner>.ts, transpiled on the fly): the command, the environment
# and the helper files it writes into the scratch folder.
JEST_VERSION=30.5.2 MOCHA_VERSION=12.0.3 MOCHA10_VERSION=10.2.0 AVA_VERSION=7.0.0 TAPE_VERSION=5.10.2 UVU_VERSION=0.5.6
npm_runners() { # installs the pinned runners once into $WORK/npm
  [ -d "$WORK/npm/node_modules" ] && return 0
  mkdir -p "$WORK/npm"
  echo '{ "private": true }' >"$WORK/npm/package.json"
  (cd "$WORK/npm" && npm install --no-audit --no-fund --loglevel=error \
    "jest@$JEST_VERSION" "mocha@$MOCHA_VERSION" "ava@$AVA_VERSION" "tape@$TAPE_VERSION" "uvu@$UVU_VERSION" >/dev/null)
}
js_project() { # js_project <dir> [module]: a project that finds the pinned runners
  mkdir -p "$1"
  ln -sfn "$WORK/npm/node_modules" "$1/node_modules"
  if [ "${2:-}" = module ]; then echo '{ "type": "module", "private": true }' >"$1/package.json"; else echo '{ "private": true }' >"$1/package.json"; fi
}
run_adapter() { # run_adapter <runner> <out-dir> <project-dir> <command>: as the adapter prepares it; its report as report.<ext>
  local dir="$WORK/adapters-js"
  if [ ! -d "$dir" ]; then
    mkdir -p "$dir"
    node --input-type=module -e "
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import ts from '$REPO/node_modules/typescript/lib/typescript.js';
for (const f of ['types', 'append-args', 'jest-json', 'jest', 'mocha', 'mocha-reporter', 'load-error', 'tap', 'tap-runner', 'caller-file', 'tape-names', 'ava', 'ava-reporter', 'uvu', 'uvu-reporter']) {
  const src = readFileSync('$REPO/harness/results/' + f + '.ts', 'utf8');
  const out = ts.transpileModule(src, { compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 } });
  writeFileSync('$dir/' + f + '.js', out.outputText);
}"
  fi
  mkdir -p "$2" "$WORK/out/$1"
  node --input-type=module -e "
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, writeFileSync } from 'node:fs';
const [runner, out, cwd, command] = process.argv.slice(1);
const name = { tap: 'tap-runner' }[runner] ?? runner;
const mod = await import('$dir/' + name + '.js');
const adapter = Object.values(mod).find((v) => v && v.runner === runner);
const p = adapter.prepare({ command, workdir: cwd, scratchDir: '$WORK/out/' + runner, env: {} });
for (const f of p.files ?? []) writeFileSync(f.path, f.content);
// An empty npm user config, like a sandbox's private HOME (this machine's may warn on every npx).
writeFileSync('$WORK/npmrc', '');
const env = { ...process.env, NPM_CONFIG_USERCONFIG: '$WORK/npmrc', ...p.env };
const r = spawnSync('sh', ['-c', p.command], { cwd, env, encoding: 'utf8' });
writeFileSync(out + '/stdout.txt', r.stdout);
writeFileSync(out + '/stderr.txt', r.stderr);
writeFileSync(out + '/exit-code', String(r.status) + '\n');
writeFileSync(out + '/command.txt', p.command + '\n');
if (p.reportFile && existsSync(p.reportFile)) copyFileSync(p.reportFile, out + '/report' + p.reportFile.slice(p.reportFile.lastIndexOf('.')));
" "$1" "$2" "$3" "$4"
  rm -f "$WORK/out/$1"/*.json "$WORK/out/$1"/*.jsonl
}

if want jest; then
npm_runners
J="$WORK/jest"; js_project "$J"; mkdir -p "$J/__tests__"
cat >"$J/__tests__/cart.test.js" <<'EOF'
describe('outer', () => {
  describe('inner', () => {
    it('deep', () => {
      expect(1).toBe(1);
    });
    it('deep fails', () => {
      expect({ a: 1 }).toEqual({ a: 2 });
    });
  });
  // The third row repeats the first one's name: a test of its own.
  test.each([
    [1, 2],
    [2, 5],
    [1, 3],
  ])('doubles %i', (a, b) => {
    expect(a * 2).toBe(b);
  });
  it.skip('skipped', () => {});
  it.todo('later');
});

it('top level', () => {
  console.log('printed by a test');
});
EOF
cat >"$J/__tests__/hook.test.js" <<'EOF'
describe('needs db', () => {
  beforeAll(() => {
    throw new Error('no database');
  });
  it('reads', () => {});
});
EOF
cat >"$J/__tests__/cleanup.test.js" <<'EOF'
afterAll(() => {
  throw new Error('cleanup failed');
});
it('fine', () => {});
EOF
echo "const { nope } = require('./missing'); it('x', () => nope());" >"$J/__tests__/broken.test.js"
run_adapter jest "$DATA/jest" "$J" "npx jest"
fi

if want mocha; then
npm_runners
M="$WORK/mocha"; js_project "$M"; mkdir -p "$M/test"
cat >"$M/test/cart.test.js" <<'EOF'
const assert = require('node:assert/strict');

describe('outer', () => {
  describe('inner', () => {
    it('deep', () => {});
    it('deep fails', () => {
      assert.deepEqual({ a: 1 }, { a: 2 });
    });
  });
  // Parametrised the mocha way; the third row repeats the first one's name.
  for (const [a, b] of [
    [1, 2],
    [2, 5],
    [1, 3],
  ]) {
    it(`doubles ${a}`, () => assert.equal(a * 2, b));
  }
  it.skip('skipped', () => {});
  it('pending');
});

it('top level', () => {
  console.log('printed by a test');
});
EOF
cat >"$M/test/hook.test.js" <<'EOF'
describe('needs db', () => {
  before(() => {
    throw new Error('no database');
  });
  it('reads', () => {});
  it('writes', () => {});
});

describe('each', () => {
  beforeEach(() => {
    throw new Error('no fixture');
  });
  it('uses it', () => {});
});
EOF
run_adapter mocha "$DATA/mocha" "$M" "npx mocha"
# The same files in mocha's worker processes: the reporter gets the results serialised.
run_adapter mocha "$DATA/mocha-parallel" "$M" "npx mocha --parallel"
# A file that does not load: mocha stops before any test, with no report.
ML="$WORK/mocha-load"; js_project "$ML"; mkdir -p "$ML/test"
echo "it('fine', () => {});" >"$ML/test/a.test.js"
echo "require('./missing'); it('x', () => {});" >"$ML/test/broken.test.js"
run_adapter mocha "$DATA/mocha-load-error" "$ML" "npx mocha"
# The same with mocha 10.2 (still common), which prints the error's stack alone, without "Exception during run:".
mkdir -p "$WORK/mocha10" && echo '{ "private": true }' >"$WORK/mocha10/package.json"
(cd "$WORK/mocha10" && npm install --no-audit --no-fund --loglevel=error "mocha@$MOCHA10_VERSION" >/dev/null)
ML10="$WORK/mocha10-load"; mkdir -p "$ML10/test"; echo '{ "private": true }' >"$ML10/package.json"
ln -sfn "$WORK/mocha10/node_modules" "$ML10/node_modules"
echo "it('fine', () => {});" >"$ML10/test/a.test.js"
printf "const api = {};\ndescribe('conflicts', () => {\n  for (const c of api.conflicts) it(c, () => {});\n});\n" >"$ML10/test/broken.test.js"
run_adapter mocha "$DATA/mocha10-load-error" "$ML10" "npx mocha"
sha256sum "$REPO/harness/results/mocha-reporter.ts" | cut -d' ' -f1 >"$DATA/mocha/reporter.sha256"
fi

if want ava; then
npm_runners
A="$WORK/ava"; js_project "$A" module; mkdir -p "$A/test/sub"
cat >"$A/test/cart.test.js" <<'EOF'
import test from 'ava';

test('passes', (t) => {
  t.pass();
});
test('fails', (t) => {
  t.is(1 + 1, 3);
});
test.skip('skipped', (t) => {
  t.pass();
});
test.todo('later');
test.failing('known bug', (t) => {
  t.fail();
});
// Parametrised the ava way: a macro with arguments.
const doubles = test.macro((t, a, b) => {
  t.is(a * 2, b);
});
test('doubles 1', doubles, 1, 2);
test('doubles 2', doubles, 2, 5);
test('logs', (t) => {
  console.log('printed by a test');
  t.log('t.log line');
  t.pass();
});
EOF
cat >"$A/test/hook.test.js" <<'EOF'
import test from 'ava';

test.before(() => {
  throw new Error('no database');
});
test('reads', (t) => t.pass());
EOF
echo "import { nope } from './missing.js'; import test from 'ava'; test('x', (t) => t.pass(nope));" >"$A/test/broken.test.js"
printf "import test from 'ava';\n\ntest('passes', (t) => t.pass());\n" >"$A/test/sub/deep.test.js"
run_adapter ava "$DATA/ava" "$A" "npx ava"
# The same files in child processes instead of worker threads.
run_adapter ava "$DATA/ava-processes" "$A" "npx ava --no-worker-threads"
sha256sum "$REPO/harness/results/ava-reporter.ts" | cut -d' ' -f1 >"$DATA/ava/reporter.sha256"
fi

if want tap; then
npm_runners
T="$WORK/tape"; js_project "$T"; mkdir -p "$T/test"
cat >"$T/test/a.js" <<'EOF'
const test = require('tape');

test('adds', (t) => {
  t.equal(1 + 1, 2, 'one plus one');
  t.equal(2 + 2, 5, 'two plus two');
  t.end();
});
test('nested', (t) => {
  t.test('inner', (st) => {
    st.ok(true, 'fine');
    st.end();
  });
  t.ok(true);
  t.end();
});
test('skipped', { skip: true }, (t) => {
  t.end();
});
test('todo', { todo: true }, (t) => {
  t.fail('not yet');
  t.end();
});
// Parametrised the tape way; the last row repeats the first one's name.
for (const [a, b] of [
  [1, 2],
  [2, 5],
  [1, 3],
]) {
  test(`doubles ${a}`, (t) => {
    t.equal(a * 2, b);
    t.end();
  });
}
EOF
cat >"$T/test/b.js" <<'EOF'
const test = require('tape');

test('b works', (t) => {
  console.log('printed by a test');
  t.deepEqual({ a: 1 }, { a: 1 });
  t.end();
});
// The name of a test in a.js: the file keeps them apart.
test('adds', (t) => {
  t.equal(1 + 1, 2);
  t.end();
});
EOF
# The last file throws outside an assertion: tape dies there, the stream has no plan.
cat >"$T/test/z.js" <<'EOF'
const test = require('tape');

test('throws', () => {
  throw new Error('boom');
});
test('never runs', (t) => t.end());
EOF
run_adapter tap "$DATA/tap-tape" "$T" "npx tape 'test/*.js'"
# The module is tape-names.ts with caller-file.ts inside: the two, in this order (test/helpers/captured.ts).
cat "$REPO/harness/results/tape-names.ts" "$REPO/harness/results/caller-file.ts" | sha256sum | cut -d' ' -f1 >"$DATA/tap-tape/names.sha256"
# Node's own TAP reporter: points are tests, subtests indented, a failing hook on the suite.
TN="$WORK/tap-node"; js_project "$TN"; mkdir -p "$TN/test"
cat >"$TN/test/cart.test.js" <<'EOF'
const assert = require('node:assert/strict');
const { before, describe, it, test } = require('node:test');

describe('outer', () => {
  describe('inner', () => {
    it('deep', () => {});
    it('deep fails', () => assert.deepEqual({ a: 1 }, { a: 2 }));
  });
  it.skip('skipped', () => {});
  it.todo('later');
  it('same name', () => {});
  it('same name', () => assert.fail('the second one fails'));
});

describe('needs db', () => {
  before(() => {
    throw new Error('no database');
  });
  it('reads', () => {});
});

test('top level # with a hash', () => {});
EOF
echo 'export const x = (;' >"$TN/test/syntax.test.js"
run_adapter tap "$DATA/tap-node" "$TN" "node --test --test-reporter=tap"
fi

if want uvu; then
npm_runners
UV="$WORK/uvu"; js_project "$UV" module; mkdir -p "$UV/tests"
cat >"$UV/tests/math.test.js" <<'EOF'
import { suite, test } from 'uvu';
import * as assert from 'uvu/assert';

const add = suite('add');
add('adds', () => {
  assert.is(1 + 1, 2);
});
add('fails', () => {
  assert.is(2 + 2, 5);
});
// Parametrised the uvu way; the last row repeats the first one's name.
for (const [a, b] of [
  [1, 2],
  [2, 5],
  [1, 3],
]) {
  add(`doubles ${a}`, () => assert.is(a * 2, b));
}
add.skip('skipped', () => {});
add.run();

test('top level', () => {
  console.log('printed by a test');
});
test.run();
EOF
cat >"$UV/tests/hook.test.js" <<'EOF'
import { suite } from 'uvu';

const db = suite('needs db');
db.before(() => {
  throw new Error('no database');
});
db('reads', () => {});
db('writes', () => {});
db.run();

const each = suite('each');
each.before.each(() => {
  throw new Error('no fixture');
});
each('uses it', () => {});
each.run();
EOF
cat >"$UV/tests/legacy.test.cjs" <<'EOF'
const { test } = require('uvu');
const assert = require('uvu/assert');

test('from commonjs', () => {
  assert.ok(true);
});
test.run();
EOF
run_adapter uvu "$DATA/uvu" "$UV" "npx uvu tests"
# A file that does not load: uvu stops before it runs any suite.
UL="$WORK/uvu-load"; js_project "$UL" module; mkdir -p "$UL/tests"
printf "import { test } from 'uvu';\n\ntest('fine', () => {});\ntest.run();\n" >"$UL/tests/a.test.js"
printf "import { nope } from './missing.js';\nimport { test } from 'uvu';\n\ntest('x', () => nope());\ntest.run();\n" >"$UL/tests/broken.test.js"
run_adapter uvu "$DATA/uvu-load-error" "$UL" "npx uvu tests"
cat "$REPO/harness/results/uvu-reporter.ts" "$REPO/harness/results/caller-file.ts" | sha256sum | cut -d' ' -f1 >"$DATA/uvu/reporter.sha256"
fi

# ---------------------------------------------------------------- stable paths, versions
grep -rlF "$WORK" "$DATA" | xargs -r sed -i "s#$WORK#/WORK#g"
{
  echo "python: $(python3 --version 2>&1)"
  echo "pytest: $(python3 -m pytest --version 2>&1)"
  echo "node: $(node --version)"
  echo "vitest: $("$REPO/node_modules/.bin/vitest" --version)"
  if command -v go >/dev/null; then echo "go: $(go version)"; fi
  if command -v cargo >/dev/null; then echo "cargo: $(cargo --version)"; echo "rustc: $(rustc --version)"; fi
  echo "jest: $JEST_VERSION"
  echo "mocha: $MOCHA_VERSION"
  echo "ava: $AVA_VERSION"
  echo "tape: $TAPE_VERSION"
  echo "uvu: $UVU_VERSION"
} >"$DATA/versions.txt"
echo "captured into $DATA"
