import type { FixtureResult } from '../pipeline/result.js';
import type { Verdict } from '../scoring/verdicts.js';
import type { LineEvent } from './line-schema.js';

/**
 * What must be the same when a transcript is re-executed: each command's exit code (and the
 * command itself), each test's status, the patch's fate and the verdict. Output text and
 * timings are not compared: they carry durations, addresses and temp paths that differ by nature.
 */
type Step =
  | { kind: 'command'; key: string; command: string; exitCode: number; timedOut: boolean }
  | { kind: 'tests'; key: string; state: string; statuses: Map<string, string> };

export interface Trace {
  steps: Step[];
  patchStatus: string | null;
  verdict: Verdict | null;
}

/** Temp folders and scratch paths differ between sandboxes; the command around them must not. */
const normaliseCommand = (c: string) => c.replace(/(^|[\s='"])\/[^\s'"]*/g, '$1<path>');

/**
 * The comparable facts of a fixture's run. Agent commands are left out (verify grades the recorded
 * patch), and so are setup commands: a setup cache may skip them, and their effect shows anyway
 * in the tests that follow and in the verdict.
 */
export function traceOf(events: readonly LineEvent[], result: FixtureResult | null): Trace {
  const steps: Step[] = [];
  for (const e of events) {
    if (e.type === 'command' && e.phase !== 'agent' && e.phase !== 'setup') {
      steps.push({ kind: 'command', key: e.label, command: normaliseCommand(e.command), exitCode: e.exitCode, timedOut: e.timedOut });
    } else if (e.type === 'tests') {
      steps.push({
        kind: 'tests',
        key: `${e.phase.toUpperCase()} tests${e.run > 1 ? ` #${e.run}` : ''}`,
        state: e.state,
        statuses: new Map(e.tests.map((t) => [t.id, t.status])),
      });
    }
  }
  const verdict = result?.verdict ?? events.findLast((e) => e.type === 'verdict')?.verdict ?? null;
  return { steps, patchStatus: result?.patch?.status ?? null, verdict };
}

function compareStep(a: Step, b: Step): string[] {
  if (a.kind === 'command' && b.kind === 'command') {
    const out: string[] = [];
    if (a.command !== b.command) out.push(`${a.key}: command \`${a.command}\` recorded, \`${b.command}\` now`);
    if (a.timedOut !== b.timedOut)
      out.push(`${a.key}: ${a.timedOut ? 'timed out' : 'finished'} when recorded, ${b.timedOut ? 'timed out' : 'finished'} now`);
    else if (a.exitCode !== b.exitCode) out.push(`${a.key}: exit code ${a.exitCode} recorded, ${b.exitCode} now`);
    return out;
  }
  if (a.kind === 'tests' && b.kind === 'tests') {
    const out: string[] = [];
    if (a.state !== b.state) out.push(`${a.key}: ${a.state} recorded, ${b.state} now`);
    for (const id of new Set([...a.statuses.keys(), ...b.statuses.keys()])) {
      const x = a.statuses.get(id) ?? 'absent';
      const y = b.statuses.get(id) ?? 'absent';
      if (x !== y) out.push(`${a.key}: ${id} ${x} recorded, ${y} now`);
    }
    return out;
  }
  return [`${a.key} recorded where the replay has ${b.key}`];
}

/** Every difference between a recorded trace and its replay, in the order the run met them. */
export function diffTraces(recorded: Trace, replayed: Trace): string[] {
  const out: string[] = [];
  const n = Math.max(recorded.steps.length, replayed.steps.length);
  for (let i = 0; i < n; i++) {
    const a = recorded.steps[i];
    const b = replayed.steps[i];
    if (a && b) {
      if (a.key !== b.key) {
        out.push(`step ${i + 1}: ${a.key} recorded, ${b.key} now`);
        break; // the stories part ways here: what follows cannot be paired
      }
      out.push(...compareStep(a, b));
    } else if (a) out.push(`${a.key} was recorded but did not run now`);
    else if (b) out.push(`${b.key} ran now but was not recorded`);
  }
  if (recorded.patchStatus !== replayed.patchStatus)
    out.push(`patch: ${recorded.patchStatus ?? 'none'} recorded, ${replayed.patchStatus ?? 'none'} now`);
  if (recorded.verdict !== replayed.verdict) out.push(`verdict: ${recorded.verdict ?? 'none'} recorded, ${replayed.verdict ?? 'none'} now`);
  return out;
}
