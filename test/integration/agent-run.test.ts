import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';
import { commandAgent } from '../../harness/agents/command.js';
import { loadPatchDir, loadPredictions } from '../../harness/agents/patch-sources.js';
import { mapProvider, nopProvider, oracleProvider } from '../../harness/agents/static.js';
import { readFixture } from '../../harness/fixtures/fingerprint.js';
import { discoverFixtures } from '../../harness/fixtures/load.js';
import { diffTrees } from '../../harness/fixtures/scaffold.js';
import { LocalBackend } from '../../harness/sandbox/host/local.js';
import { summarize } from '../../harness/reporters/report.js';
import { processesWith, uniqueSleep } from '../helpers/procs.js';
import { ADD_PY, ADD_TEST, makeProject, PYTEST, runProject, type Project } from '../helpers/project.js';

let project: Project | undefined;
afterEach(async () => {
  await project?.cleanup();
  project = undefined;
});

const FIXED = 'def add(a, b):\n    return a + b\n';
const TESTS = { failToPass: ['test_calc.py::test_add'], passToPass: ['test_calc.py::test_zero'] };

async function calcProject(extra: Record<string, Parameters<typeof makeProject>[0][string]> = {}) {
  return makeProject({
    calc: {
      manifest: { ...PYTEST, tests: TESTS },
      files: { 'calc.py': ADD_PY, 'test_calc.py': ADD_TEST },
      oracle: await diffTrees({ 'calc.py': ADD_PY }, { 'calc.py': FIXED }),
    },
    ...extra,
  });
}

const run = (p: Project, provider: Parameters<typeof runProject>[1]['provider'], extra: Partial<Parameters<typeof runProject>[1]> = {}) =>
  runProject(p, { mode: 'run', provider, ...extra });

describe('agent runs: grading people can trust', () => {
  test('the oracle resolves, nop does not, and both report partial counts', async () => {
    project = await calcProject();
    expect((await run(project, oracleProvider)).byId.calc).toMatchObject({
      verdict: 'resolved',
      failToPass: { passed: 1, total: 1 },
      passToPass: { passed: 1, total: 1 },
    });
    const nop = (await run(project, nopProvider)).byId.calc!;
    expect(nop).toMatchObject({ verdict: 'unresolved', failToPass: { passed: 0, total: 1 }, passToPass: { passed: 1, total: 1 } });
    expect(nop.reason).toContain('empty patch');
  });

  test('a patch that edits the tests or adds a conftest.py that forges outcomes cannot turn the fixture green', async () => {
    project = await calcProject();
    const forge =
      'import pytest\n\n@pytest.hookimpl(hookwrapper=True)\ndef pytest_runtest_makereport(item, call):\n    outcome = yield\n    outcome.get_result().outcome = "passed"\n';
    const patch = await diffTrees(
      { 'calc.py': ADD_PY, 'test_calc.py': ADD_TEST },
      { 'conftest.py': forge, 'test_calc.py': 'def test_add():\n    pass\n\ndef test_zero():\n    pass\n' },
    );
    const r = (await run(project, mapProvider('cheater', new Map([['calc', { source: 'cheat', text: patch }]])))).byId.calc!;
    expect(r.verdict).toBe('unresolved');
    expect(r.patch?.tampered).toEqual(['conftest.py', 'test_calc.py']);
    expect(r.reason).toContain('edits to protected files ignored');
  });

  test('a patch with ../ or an absolute path is rejected before anything is written', async () => {
    project = await calcProject();
    const target = path.join(os.tmpdir(), `rg-agent-escape-${process.pid}`);
    for (const evil of [
      `--- /dev/null\n+++ b/../../../../../../..${target}\n@@ -0,0 +1 @@\n+owned\n`,
      `--- /dev/null\n+++ ${target}\n@@ -0,0 +1 @@\n+owned\n`,
    ]) {
      const r = await run(project, mapProvider('evil', new Map([['calc', { source: 'evil', text: evil }]])));
      expect(r.byId.calc).toMatchObject({ verdict: 'rejected', sandboxId: null });
      expect(existsSync(target)).toBe(false);
    }
  });

  test('a patch that is missing, not a diff, empty or does not apply is graded before any sandbox, setup or RED run', async () => {
    project = await calcProject();
    const stale = await diffTrees({ 'calc.py': 'def add(a, b):\n    return a * b\n' }, { 'calc.py': FIXED });
    const patches = new Map([['calc', { source: 'stale', text: stale }]]);
    const cases: [string, Parameters<typeof run>[1], string, RegExp][] = [
      ['does not apply', mapProvider('m', patches), 'patch_error', /^failed: .*\(refused before any sandbox\)$/s],
      ['missing', mapProvider('m', new Map()), 'patch_error', /^missing: m has no patch for calc/],
      ['not a diff', mapProvider('m', new Map([['calc', { source: 'x', text: 'I fixed it.\n' }]])), 'patch_error', /^not a diff: /],
      ['empty', mapProvider('m', new Map([['calc', { source: 'x', text: '' }]])), 'unresolved', /^empty patch: nothing changed/],
    ];
    for (const [what, provider, verdict, reason] of cases) {
      const r = await run(project, provider);
      const res = r.byId.calc!;
      expect({ what, verdict: res.verdict, sandboxId: res.sandboxId, red: res.red }).toEqual({ what, verdict, sandboxId: null, red: null });
      expect(res.reason).toMatch(reason);
      expect(Object.keys(res.timings).filter((p) => p !== 'patch')).toEqual([]);
    }
    // `nop` is the exception: its empty patch is what is measured, so it runs.
    expect((await run(project, nopProvider)).byId.calc!.sandboxId).not.toBeNull();
  });

  test('a fixture whose failToPass tests already pass is invalid_fixture, not a free point', async () => {
    project = await makeProject({
      free: { manifest: { ...PYTEST, tests: TESTS }, files: { 'calc.py': FIXED, 'test_calc.py': ADD_TEST }, oracle: '' },
    });
    const r = (await run(project, nopProvider)).byId.free!;
    expect(r.verdict).toBe('invalid_fixture');
    expect(r.reason).toContain('already pass without any patch');
    // Without the baseline the same fixture would be scored: the baseline is what catches it.
    expect((await run(project, nopProvider, { baseline: false })).byId.free!.verdict).toBe('resolved');
  });

  test('a test missing from the report counts as failed', async () => {
    project = await makeProject({
      calc: {
        manifest: {
          ...PYTEST,
          tests: { failToPass: TESTS.failToPass, passToPass: [...TESTS.passToPass, 'test_calc.py::test_renamed_away'] },
        },
        files: { 'calc.py': ADD_PY, 'test_calc.py': ADD_TEST },
        oracle: await diffTrees({ 'calc.py': ADD_PY }, { 'calc.py': FIXED }),
      },
    });
    // With the baseline, a declared test that does not exist makes the fixture invalid ...
    expect((await run(project, oracleProvider)).byId.calc!.verdict).toBe('invalid_fixture');
    // ... and without it, the missing test is a failure: never resolved.
    const r = (await run(project, oracleProvider, { baseline: false })).byId.calc!;
    expect(r).toMatchObject({ verdict: 'unresolved', passToPass: { passed: 1, total: 2 } });
    expect(r.reason).toContain('test_calc.py::test_renamed_away');
  });

  test('a command agent works in its own sandbox; its git diff is the patch, binary files included', async () => {
    project = await calcProject();
    const agent = commandAgent(
      `cd {workdir} && sed -i 's/a - b/a + b/' calc.py && printf '\\000\\001\\377' > blob.bin && cat {issue} > seen-issue.txt`,
      { timeoutSec: 30, network: false },
    );
    const r = (await run(project, agent)).byId.calc!;
    expect(r.verdict).toBe('resolved');
    expect(r.timings.agent).toBeGreaterThan(0);
    expect(r.patch?.files.sort()).toEqual(['blob.bin', 'calc.py', 'seen-issue.txt']);
  });

  test("an agent works on the tree the fixture's fingerprint read: a file changed on disk since is not what it sees", async () => {
    project = await calcProject();
    const fixture = (await discoverFixtures(project)).fixtures[0]!;
    const read = await readFixture(fixture);
    await writeFile(path.join(fixture.dir, 'calc.py'), 'changed on disk after the fingerprint\n');
    const backend = new LocalBackend();
    try {
      const agent = commandAgent('cd {workdir} && cp calc.py seen.py', { timeoutSec: 30, network: false });
      const signal = new AbortController().signal;
      const out = await agent.patchFor(fixture, {
        backend,
        runId: 'agent-tree',
        signal,
        emit: () => undefined,
        setupCache: null,
        tree: read.tree,
      });
      expect(out.text).toContain('+++ b/seen.py');
      expect(out.text).toContain('+    return a - b');
      expect(out.text).not.toContain('changed on disk');
    } finally {
      await backend.close();
    }
  });

  test("an agent's patch is measured against the workspace as setup left it: setup's files are not the agent's", async () => {
    project = await makeProject({
      calc: {
        manifest: { ...PYTEST, tests: TESTS, setup: { commands: ['echo generated > lockfile.txt && echo \"# set up\" >> calc.py'] } },
        files: { 'calc.py': ADD_PY, 'test_calc.py': ADD_TEST },
        oracle: await diffTrees({ 'calc.py': ADD_PY }, { 'calc.py': FIXED }),
      },
    });
    const idle = (await run(project, commandAgent('true', { timeoutSec: 30, network: false }))).byId.calc!;
    expect(idle.patch).toMatchObject({ files: [] });
    expect(idle.reason).toContain('empty patch');
    const fixer = (await run(project, commandAgent("cd {workdir} && sed -i 's/a - b/a + b/' calc.py", { timeoutSec: 30, network: false })))
      .byId.calc!;
    expect(fixer.patch?.files).toEqual(['calc.py']);
    expect(fixer.verdict).toBe('resolved');
  });

  test('an agent command that cannot start, or fails having changed nothing, is agent_error, out of the scored denominator', async () => {
    project = await calcProject();
    const missing = (await run(project, commandAgent('my-agent {issue}', { timeoutSec: 30, network: false }))).byId.calc!;
    expect(missing.verdict).toBe('agent_error');
    expect(missing.reason).toMatch(/^the agent command exited 127 having changed nothing: .*my-agent: not found/);
    const failing = (await run(project, commandAgent('echo "no API key" >&2; exit 3', { timeoutSec: 30, network: false }))).byId.calc!;
    expect(failing).toMatchObject({ verdict: 'agent_error', reason: 'the agent command exited 3 having changed nothing: no API key' });
    expect(summarize([missing, failing]).denominators).toEqual({ all: 2, scored: 0 });
    // An agent that fails after changing something is graded on what it changed.
    const partial = (
      await run(project, commandAgent("cd {workdir} && sed -i 's/a - b/a + b/' calc.py; exit 1", { timeoutSec: 30, network: false }))
    ).byId.calc!;
    expect(partial.verdict).toBe('resolved');
  });

  test('an agent that hangs is stopped at its time limit with its whole process tree', async () => {
    project = await calcProject();
    const t = uniqueSleep();
    const r = (await run(project, commandAgent(`setsid sleep ${t} & sleep ${t}`, { timeoutSec: 1, network: false }))).byId.calc!;
    expect(r.verdict).toBe('timeout');
    expect(r.reason).toContain('time limit');
    expect(processesWith(t)).toEqual([]);
  });

  test('--repeat: a verdict that depends on a flaky test says so', async () => {
    const coin =
      'import os\n\ndef test_coin():\n    n = int(open("n").read()) if os.path.exists("n") else 0\n    open("n", "w").write(str(n + 1))\n    assert n % 2 == 0\n';
    project = await makeProject({
      calc: {
        manifest: { ...PYTEST, tests: { failToPass: TESTS.failToPass, passToPass: [...TESTS.passToPass, 'test_coin.py::test_coin'] } },
        files: { 'calc.py': ADD_PY, 'test_calc.py': ADD_TEST, 'test_coin.py': coin },
        oracle: await diffTrees({ 'calc.py': ADD_PY }, { 'calc.py': FIXED }),
      },
    });
    const r = (await run(project, oracleProvider, { repeat: 2, baseline: false })).byId.calc!;
    expect(r.flakyDependence).toEqual(['test_coin.py::test_coin']);
    expect(r.reason).toContain('depends on flaky test(s): test_coin.py::test_coin');
  });
});

describe('patch sources: bad entries are named and the rest goes on', () => {
  test('predictions JSONL: several models become separate providers; bad lines are reported by number', async () => {
    project = await calcProject();
    const file = path.join(project.root, 'preds.jsonl');
    const ok = await diffTrees({ 'calc.py': ADD_PY }, { 'calc.py': FIXED });
    await writeFile(
      file,
      [
        JSON.stringify({ instance_id: 'calc', model_name_or_path: 'model-a', model_patch: ok }),
        '{ not json',
        JSON.stringify({ instance_id: 'nope', model_name_or_path: 'model-a', model_patch: ok }),
        JSON.stringify({ instance_id: 'calc', model_name_or_path: 'model-b', model_patch: '' }),
        JSON.stringify({ model_name_or_path: 'model-b' }),
      ].join('\n'),
    );
    const loaded = await loadPredictions(file, new Set(['calc']));
    expect(loaded.providers.map((p) => p.subject)).toEqual(['model-a', 'model-b']);
    expect(loaded.problems.map((p) => p.where)).toEqual(['preds.jsonl:2', 'preds.jsonl:3', 'preds.jsonl:5']);
    expect(loaded.problems[1]!.message).toContain('unknown fixture "nope"');
    const [a, b] = await Promise.all(loaded.providers.map((p) => run(project!, p)));
    expect(a!.byId.calc!.verdict).toBe('resolved');
    expect(b!.byId.calc!.verdict).toBe('unresolved');
  });

  test('a patch folder: <id>.patch or .diff; text that is not a diff is a patch_error', async () => {
    project = await calcProject();
    const dir = path.join(project.root, 'patches');
    await import('node:fs/promises').then((fs) => fs.mkdir(dir));
    await writeFile(path.join(dir, 'calc.diff'), 'I fixed it, trust me.\n');
    await writeFile(path.join(dir, 'ghost.patch'), '');
    const loaded = await loadPatchDir(dir, new Set(['calc']));
    expect(loaded.problems).toEqual([{ where: 'ghost.patch', message: 'unknown fixture "ghost"' }]);
    const r = (await run(project, loaded.providers[0]!)).byId.calc!;
    expect(r).toMatchObject({ verdict: 'patch_error', patch: { status: 'not_a_diff' } });
  });
});
