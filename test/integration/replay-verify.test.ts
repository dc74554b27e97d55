import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { FixtureEvent } from '../../harness/pipeline/events.js';
import type { FixtureResult } from '../../harness/pipeline/result.js';
import { LocalBackend } from '../../harness/sandbox/host/local.js';
import { openRun } from '../../harness/transcripts/reader.js';
import { verifyRun } from '../../harness/commands/replay-verify.js';
import { RUN_SCHEMA } from '../../harness/transcripts/schema.js';
import { nopProvider } from '../../harness/agents/static.js';
import { ADD_PY, ADD_TEST, makeProject, PYTEST, runProject, selfcheckProject, type Project } from '../helpers/project.js';

const ORACLE =
  'diff --git a/calc.py b/calc.py\n--- a/calc.py\n+++ b/calc.py\n@@ -1,2 +1,2 @@\n def add(a, b):\n-    return a - b\n+    return a + b\n';
let project: Project;
let recorded: { events: FixtureEvent[]; result: FixtureResult };

/** Writes a transcript folder the way the writer does: run.json and one JSONL per fixture. */
async function transcript(
  name: string,
  fixtures: Record<string, (FixtureEvent | { type: 'result'; result: FixtureResult })[] | null>,
  mode = 'selfcheck',
  subject = 'oracle',
) {
  const dir = path.join(project.root, 'transcripts', name);
  await mkdir(dir, { recursive: true });
  const state = {
    schema: RUN_SCHEMA,
    runId: name,
    mode,
    status: 'completed',
    startedAt: '2026-01-01T00:00:00.000Z',
    updatedAt: '2026-01-01T00:00:00.000Z',
    backend: 'local',
    options: { subject, repeat: 1 },
    harness: { version: 't', node: 'v20', platform: 'x' },
    fixtures: {} as Record<string, unknown>,
  };
  for (const [id, lines] of Object.entries(fixtures)) {
    state.fixtures[id] = { status: lines ? 'done' : 'pending', transcript: `${id}.jsonl` };
    if (lines) await writeFile(path.join(dir, `${id}.jsonl`), lines.map((l, i) => `${JSON.stringify({ t: i, ts: 'x', ...l })}\n`).join(''));
  }
  await writeFile(path.join(dir, 'run.json'), JSON.stringify(state));
  return openRun(dir);
}
const verify = async (run: Awaited<ReturnType<typeof transcript>>) =>
  (
    await verifyRun({
      run,
      fixtureIds: Object.keys(run.state.fixtures),
      roots: project,
      backend: new LocalBackend(),
      concurrency: 2,
      signal: new AbortController().signal,
    })
  ).fixtures;

beforeAll(async () => {
  project = await makeProject({ calc: { manifest: PYTEST, files: { 'calc.py': ADD_PY, 'test_calc.py': ADD_TEST }, oracle: ORACLE } });
  const { events, byId } = await selfcheckProject(project);
  recorded = { events: events.map((e) => e.event), result: byId.calc! };
});
afterAll(() => project.cleanup());

describe('replay --verify', () => {
  test('re-executing a recorded selfcheck gives no drift', async () => {
    const run = await transcript('same', { calc: [...recorded.events, { type: 'result', result: recorded.result }] });
    expect(await verify(run)).toEqual([{ fixtureId: 'calc', status: 'same', differences: [], recordedVerdict: 'valid', verdict: 'valid' }]);
  });

  test('a nop baseline run verifies as it ran: its empty patch is graded again, not refused before running', async () => {
    const nop = await makeProject({
      calc: {
        manifest: { ...PYTEST, tests: { failToPass: ['test_calc.py::test_add'], passToPass: [] } },
        files: { 'calc.py': ADD_PY, 'test_calc.py': ADD_TEST },
        oracle: ORACLE,
      },
    });
    const saved = project;
    try {
      project = nop;
      const { events, byId } = await runProject(nop, { mode: 'run', provider: nopProvider });
      const lines = [...events.filter((e) => e.id === 'calc').map((e) => e.event), { type: 'result' as const, result: byId.calc! }];
      const run = await transcript('nop-run', { calc: lines }, 'run', 'nop');
      expect(await verify(run)).toEqual([
        { fixtureId: 'calc', status: 'same', differences: [], recordedVerdict: 'unresolved', verdict: 'unresolved' },
      ]);
    } finally {
      project = saved;
      await nop.cleanup();
    }
  });

  test('a recording that differs from what happens now is drift, with the first difference first', async () => {
    const altered = recorded.events.map((e) =>
      e.type === 'tests' && e.phase === 'red' ? { ...e, tests: e.tests.map((t) => ({ ...t, status: 'passed' })) } : e,
    );
    const run = await transcript('altered', { calc: [...altered, { type: 'result', result: recorded.result }] });
    const [d] = await verify(run);
    expect(d!.status).toBe('drift');
    expect(d!.differences[0]).toBe('RED tests: test_calc.py::test_add passed recorded, failed now');
  });

  test('a patch whose text no longer matches its recorded sha256 is refused without running anything', async () => {
    const events = recorded.events.map((e) => (e.type === 'patch' ? { ...e, sha256: 'f'.repeat(64) } : e));
    const run = await transcript('tampered', { calc: [...events, { type: 'result', result: recorded.result }] }, 'run');
    const [d] = await verify(run);
    expect(d).toMatchObject({ status: 'drift', verdict: null });
    expect(d!.differences[0]).toMatch(/the recorded patch text does not match its recorded sha256 ffffffffffff…/);
  });

  test('unfinished, never started, agent timeouts and unknown fixtures are told apart', async () => {
    const agentTimeout = {
      ...recorded.result,
      fixtureId: 'calc',
      verdict: 'timeout' as const,
      red: null,
      green: null,
      timings: { agent: 1000 },
    };
    const run = await transcript(
      'mixed',
      {
        calc: [recorded.events[0]!, { type: 'result', result: agentTimeout }],
        gone: [
          { ...recorded.events[0]!, fixtureId: 'gone' } as FixtureEvent,
          { type: 'result', result: { ...recorded.result, fixtureId: 'gone' } },
        ],
        cut: [recorded.events[0]!],
        never: null,
      },
      'run',
    );
    const byId = Object.fromEntries((await verify(run)).map((d) => [d.fixtureId, d]));
    expect(byId.calc).toMatchObject({
      status: 'skipped',
      differences: ['the agent timed out when recorded: the verdict did not come from a patch'],
    });
    expect(byId.gone).toMatchObject({ status: 'drift', differences: [`fixture gone is not in ${project.fixturesDir}`] });
    expect(byId.cut).toMatchObject({ status: 'skipped', differences: ['unfinished when recorded (no verdict): nothing to verify'] });
    expect(byId.never).toMatchObject({ status: 'skipped', differences: ['never started when recorded: nothing to verify'] });
  });
});
