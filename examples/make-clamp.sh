#!/bin/sh
# Makes examples/clamp.bundle (a small node:test project with a real-looking fix in its history:
# the README's `new --from-commit`, `mine` and `import swe-bench` examples use it) and
# examples/swe-bench.jsonl (that fix as a SWE-bench instance). Fixed names and dates: the same
# commits every time. Run from anywhere: sh examples/make-clamp.sh
set -eu
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export GIT_AUTHOR_NAME='Ada Example' GIT_AUTHOR_EMAIL='ada@example.com' GIT_COMMITTER_NAME='Ada Example' GIT_COMMITTER_EMAIL='ada@example.com'
export GIT_CONFIG_NOSYSTEM=1 HOME="$work"
cd "$work" && git init -q -b main clamp && cd clamp
commit() { GIT_AUTHOR_DATE="$1" GIT_COMMITTER_DATE="$1" git commit -q -m "$2" ${3:+-m "$3"}; }

mkdir src test
printf '{\n  "name": "clamp",\n  "version": "1.0.0",\n  "private": true,\n  "type": "module",\n  "scripts": { "test": "node --test" }\n}\n' >package.json
printf 'export function clamp(x, lo, hi) {\n  return Math.max(lo, x);\n}\n' >src/clamp.js
cat >test/clamp.test.js <<'JS'
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { clamp } from '../src/clamp.js';

test('keeps values inside', () => assert.equal(clamp(5, 0, 10), 5));
test('raises values below', () => assert.equal(clamp(-3, 0, 10), 0));
JS
git add -A && commit '2024-03-01T10:00:00Z' 'Add clamp()'
printf '# clamp\n\nKeeps a number within bounds.\n' >README.md
git add -A && commit '2024-03-02T10:00:00Z' 'Describe clamp() in the README'
base=$(git rev-parse HEAD)
printf 'export function clamp(x, lo, hi) {\n  return Math.min(hi, Math.max(lo, x));\n}\n' >src/clamp.js
printf "test('lowers values above', () => assert.equal(clamp(15, 0, 10), 10));\n" >>test/clamp.test.js
git add -A && commit '2024-03-03T10:00:00Z' 'Fix clamp() ignoring the upper bound' 'clamp(15, 0, 10) returned 15: the upper bound was never applied.'

git bundle create -q "$here/clamp.bundle" HEAD main
node -e '
const [base, patch, testPatch] = process.argv.slice(1);
const problem = "clamp() ignores its upper bound\n\nclamp(15, 0, 10) returns 15; it should return 10.\n";
const keep = ["test/clamp.test.js::keeps values inside", "test/clamp.test.js::raises values below"];
console.log(JSON.stringify({ instance_id: "example__clamp-3", repo: "example/clamp", base_commit: base, patch, test_patch: testPatch,
  problem_statement: problem, hints_text: "", created_at: "2024-03-03T10:00:00Z", version: "1.0", environment_setup_commit: base,
  FAIL_TO_PASS: JSON.stringify(["test/clamp.test.js::lowers values above"]), PASS_TO_PASS: JSON.stringify(keep) }));
' "$base" "$(git diff "$base" HEAD -- src)
" "$(git diff "$base" HEAD -- test)
" >"$here/swe-bench.jsonl"
echo "wrote $here/clamp.bundle and $here/swe-bench.jsonl (base $base)"
