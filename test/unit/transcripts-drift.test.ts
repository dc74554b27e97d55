import { describe, expect, test } from 'vitest';
import type { FixtureEvent } from '../../harness/pipeline/events.js';
import type { FixtureResult } from '../../harness/pipeline/result.js';
import { diffTraces, traceOf } from '../../harness/transcripts/replay-drift.js';

const stream = { text: '', bytes: 0, sha256: '', truncated: false, utf8: true };
const command = (phase: 'setup' | 'red' | 'green' | 'agent', exitCode: number, command = 'python3 -m pytest -q'): FixtureEvent => ({
  type: 'command',
  phase,
  label: phase === 'red' ? 'RED tests' : phase === 'green' ? 'GREEN tests' : `${phase} #1`,
  command,
  cwd: '.',
  envKeys: [],
  exitCode,
  signal: null,
  timedOut: false,
  durationMs: 10,
  stdout: stream,
  stderr: stream,
});
const tests = (phase: 'red' | 'green', statuses: Record<string, string>): FixtureEvent => ({
  type: 'tests',
  phase,
  run: 1,
  state: Object.values(statuses).includes('failed') ? 'fail' : 'pass',
  counts: {},
  tests: Object.entries(statuses).map(([id, status]) => ({ id, status })),
});
const result = (verdict: string, patch = 'applied') => ({ verdict, patch: { status: patch } }) as unknown as FixtureResult;

const RECORDED: FixtureEvent[] = [
  command('setup', 0, 'pip install -r requirements.txt'),
  command('red', 1),
  tests('red', { 't::a': 'failed', 't::b': 'passed' }),
  command('green', 0),
  tests('green', { 't::a': 'passed', 't::b': 'passed' }),
];

describe('drift between a recording and its re-execution', () => {
  test('the same exit codes, statuses, patch and verdict: no drift, whatever the timings and temp paths', () => {
    const again = RECORDED.map((e) => (e.type === 'command' ? { ...e, durationMs: 999 } : e));
    expect(diffTraces(traceOf(RECORDED, result('valid')), traceOf(again, result('valid')))).toEqual([]);
    const vitest = (dir: string) => [command('red', 1, `npx vitest run --reporter=json --outputFile.json=${dir}/report.json`)];
    expect(diffTraces(traceOf(vitest('/tmp/redgreen-a-1/scratch'), null), traceOf(vitest('/tmp/redgreen-a-2/scratch'), null))).toEqual([]);
  });

  test('setup and agent commands are not compared one by one (a setup cache may skip them; verify grades the recorded patch)', () => {
    const cached = RECORDED.filter((e) => !(e.type === 'command' && e.phase === 'setup'));
    expect(diffTraces(traceOf([command('agent', 0), ...RECORDED], result('valid')), traceOf(cached, result('valid')))).toEqual([]);
  });

  test('a different exit code is the first difference, named by its step', () => {
    const again = RECORDED.map((e) => (e.type === 'command' && e.phase === 'green' ? { ...e, exitCode: 1 } : e));
    expect(diffTraces(traceOf(RECORDED, result('valid')), traceOf(again, result('not_green')))).toEqual([
      'GREEN tests: exit code 0 recorded, 1 now',
      'verdict: valid recorded, not_green now',
    ]);
  });

  test('a test whose status changed, or that disappeared, is named', () => {
    const again = [...RECORDED.slice(0, 4), tests('green', { 't::a': 'failed' })];
    expect(diffTraces(traceOf(RECORDED, result('valid')), traceOf(again, result('valid')))).toEqual([
      'GREEN tests: pass recorded, fail now',
      'GREEN tests: t::a passed recorded, failed now',
      'GREEN tests: t::b passed recorded, absent now',
    ]);
  });

  test('a step that did not run now, and a different patch outcome, are differences', () => {
    const stopped = RECORDED.slice(0, 3);
    expect(diffTraces(traceOf(RECORDED, result('valid')), traceOf(stopped, result('patch_error', 'failed')))).toEqual([
      'GREEN tests was recorded but did not run now',
      'GREEN tests was recorded but did not run now',
      'patch: applied recorded, failed now',
      'verdict: valid recorded, patch_error now',
    ]);
    const timedOut = RECORDED.map((e) => (e.type === 'command' && e.phase === 'red' ? { ...e, timedOut: true } : e));
    expect(diffTraces(traceOf(RECORDED, null), traceOf(timedOut, null))[0]).toBe('RED tests: finished when recorded, timed out now');
  });
});
