#!/usr/bin/env bash
# Regenerates test/data/ from the real runners: small throwaway projects in a temp dir, run the
# way the harness's adapters prepare them (harness/results/*.ts), outputs copied into test/data.
# The temp dir's path is replaced by /WORK so that re-running gives a stable diff; the unit tests
# pass /WORK/<runner> as the workspace. Needs: python3 with pytest, node (>=20), git checkout's
# node_modules (vitest, typescript).
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
DATA="$REPO/test/data"
WORK="$(mktemp -d "${TMPDIR:-/tmp}/redgreen-capture-XXXXXX")"
trap 'rm -rf "$WORK"' EXIT

# Runs a command in a project dir, keeping stdout, stderr and the exit code apart.
run() { # run <out-dir> <cwd> <command...>
  local out="$1" cwd="$2"; shift 2
  mkdir -p "$out"
  set +e
  (cd "$cwd" && "$@") >"$out/stdout.txt" 2>"$out/stderr.txt"
  echo $? >"$out/exit-code"
  set -e
}

rm -rf "$DATA" && mkdir -p "$DATA"

# ---------------------------------------------------------------- pytest (JUnit XML, xunit1)
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
ADDOPTS="--junitxml=$WORK/out/pytest-junit.xml -o junit_family=xunit1 -p no:cacheprovider"
PYTEST_ADDOPTS="$ADDOPTS" run "$DATA/pytest" "$P" python3 -m pytest -rA
cp "$WORK/out/pytest-junit.xml" "$DATA/pytest/junit.xml"

# A module that fails to import: pytest stops at collection.
PC="$WORK/pytest-collect"; mkdir -p "$PC"
printf 'import no_such_module\n\ndef test_x():\n    pass\n' >"$PC/test_broken.py"
printf 'def test_ok():\n    pass\n' >"$PC/test_ok.py"
ADDOPTS="--junitxml=$WORK/out/pytest-collect.xml -o junit_family=xunit1 -p no:cacheprovider"
PYTEST_ADDOPTS="$ADDOPTS" run "$DATA/pytest-collect-error" "$PC" python3 -m pytest -rA
cp "$WORK/out/pytest-collect.xml" "$DATA/pytest-collect-error/junit.xml"

# ---------------------------------------------------------------- unittest (-v on stderr)
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

# ---------------------------------------------------------------- node:test (our JSONL reporter)
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

# ---------------------------------------------------------------- vitest (JSON reporter)
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
  test.each([
    [1, 2],
    [2, 5],
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

# ---------------------------------------------------------------- stable paths, versions
grep -rlF "$WORK" "$DATA" | xargs -r sed -i "s#$WORK#/WORK#g"
{
  echo "python: $(python3 --version 2>&1)"
  echo "pytest: $(python3 -m pytest --version 2>&1)"
  echo "node: $(node --version)"
  echo "vitest: $("$REPO/node_modules/.bin/vitest" --version)"
} >"$DATA/versions.txt"
echo "captured into $DATA"
