import { stat } from 'node:fs/promises';
import path from 'node:path';
import { mapProvider, nopProvider, oracleProvider } from '../agents/static.js';
import { SharedBaselines } from '../pipeline/baseline-phase.js';
import { fingerprintFixture } from '../fixtures/fingerprint.js';
import { discoverFixtures, type Fixture, type FixtureRoots } from '../fixtures/load.js';
import type { FixtureEvent } from '../pipeline/events.js';
import { runFixtures } from '../pipeline/scheduler.js';
import type { Verdict } from '../scoring/verdicts.js';
import type { SandboxBackend } from '../sandbox/core/types.js';
import { readFixture, type FixtureTranscript, type TranscriptRun } from '../transcripts/reader.js';
import { diffTraces, traceOf } from '../transcripts/replay-drift.js';
import { sha256 } from '../sandbox/core/sha256.js';

export interface VerifyInput {
  run: TranscriptRun;
  fixtureIds: readonly string[];
  roots: FixtureRoots;
  backend: SandboxBackend;
  concurrency: number;
  signal: AbortSignal;
}

export interface FixtureDrift {
  fixtureId: string;
  /** same: re-executed with no difference; drift: a difference (the first one first); skipped: nothing to verify. */
  status: 'same' | 'drift' | 'skipped';
  differences: string[];
  recordedVerdict: Verdict | null;
  verdict: Verdict | null;
}

const short = (h: string) => `${h.slice(0, 12)}…`;

/** Why a recorded fixture cannot or need not be re-executed, or null when it can be. */
function skipReason(ft: FixtureTranscript): string | null {
  if (ft.missing) return 'never started when recorded: nothing to verify';
  if (!ft.result) return 'unfinished when recorded (no verdict): nothing to verify';
  const r = ft.result;
  if (r.verdict === 'timeout' && r.timings.agent !== undefined && !r.red && !r.green)
    return 'the agent timed out when recorded: the verdict did not come from a patch';
  return null;
}

/**
 * Re-executes a recorded run in fresh sandboxes: the same fixture content (checked against the
 * recorded hash), the same patch (the recorded text, checked against its sha256; selfcheck uses
 * the oracle, which the fixture hash covers), the same mode and options. Each fixture's exit codes,
 * test statuses, patch outcome and verdict are compared with the recording.
 */
export async function verifyRun(input: VerifyInput): Promise<{ fixtures: FixtureDrift[]; interrupted: boolean }> {
  const { state } = input.run;
  const drifts = new Map<string, FixtureDrift>();
  const transcripts = new Map<string, FixtureTranscript>();
  const settle = (ft: FixtureTranscript, status: FixtureDrift['status'], differences: string[], verdict: Verdict | null = null) =>
    drifts.set(ft.fixtureId, { fixtureId: ft.fixtureId, status, differences, recordedVerdict: ft.result?.verdict ?? null, verdict });

  const present: string[] = [];
  for (const id of input.fixtureIds) {
    const ft = await readFixture(input.run, id);
    // Output is never compared: drop it, so a large run's transcripts fit in memory together.
    ft.lines = ft.lines.map((l) =>
      l.type === 'command' ? { ...l, stdout: { ...l.stdout, text: '' }, stderr: { ...l.stderr, text: '' } } : l,
    );
    transcripts.set(id, ft);
    const skip = skipReason(ft);
    if (skip) settle(ft, 'skipped', [skip]);
    else if (!(await stat(path.join(input.roots.fixturesDir, id)).catch(() => null)))
      settle(ft, 'drift', [`fixture ${id} is not in ${input.roots.fixturesDir}`]);
    else present.push(id);
  }

  // discoverFixtures treats no ids as "all of them": with nothing to run, load nothing.
  const discovery = present.length ? await discoverFixtures(input.roots, present) : { fixtures: [], broken: [] };
  const patches = new Map<string, { source: string; text: string }>();
  const fixtures: Fixture[] = [];
  // A model of a several-model run graded on another run's RED baseline: re-executed as it ran, on that baseline.
  const repeat = typeof state.options.repeat === 'number' ? state.options.repeat : 1;
  let baselines: SharedBaselines | null = null;
  for (const f of discovery.fixtures) {
    const ft = transcripts.get(f.id)!;
    const recorded = ft.lines.find((l) => l.type === 'fixture');
    const now = await fingerprintFixture(f);
    if (recorded?.type === 'fixture' && recorded.fixtureSha256 !== now) {
      settle(ft, 'drift', [`fixture content changed: sha256 ${short(recorded.fixtureSha256)} recorded, ${short(now)} now`]);
      continue;
    }
    const patch = ft.lines.find((l) => l.type === 'patch');
    if (patch?.type === 'patch' && patch.text !== null) {
      if (patch.sha256 && sha256(patch.text) !== patch.sha256) {
        settle(ft, 'drift', [
          `the recorded patch text does not match its recorded sha256 ${short(patch.sha256)}: the transcript was altered`,
        ]);
        continue;
      }
      patches.set(f.id, { source: patch.source, text: patch.text });
    }
    if (ft.result?.baselineFrom && ft.result.red) {
      baselines ??= new SharedBaselines();
      baselines.seed(SharedBaselines.key(now, input.backend.name, repeat), { red: ft.result.red }, ft.result.baselineFrom);
    }
    fixtures.push(f);
  }

  const subject = typeof state.options.subject === 'string' ? state.options.subject : 'recorded patches';
  const events = new Map<string, FixtureEvent[]>();
  const outcome = await runFixtures({
    mode: state.mode,
    // The nop baseline is graded on its empty patch (the cheap refusal would skip the run): verify it as it ran.
    provider: state.mode === 'selfcheck' ? oracleProvider : subject === 'nop' ? nopProvider : mapProvider(subject, patches),
    baseline: state.options.baseline !== false,
    repeat,
    baselines,
    fixtures,
    broken: discovery.broken,
    backend: input.backend,
    runId: `verify-${state.runId}`,
    concurrency: input.concurrency,
    signal: input.signal,
    observer: { onEvent: (id, e) => (events.get(id) ?? events.set(id, []).get(id)!).push(e) },
  });
  for (const r of outcome.results) {
    const ft = transcripts.get(r.fixtureId)!;
    const differences = diffTraces(traceOf(ft.lines, ft.result), traceOf(events.get(r.fixtureId) ?? [], r));
    if (ft.problems.length)
      differences.push(`the transcript has ${ft.problems.length} unreadable line(s) (first: line ${ft.problems[0]!.line})`);
    settle(ft, differences.length ? 'drift' : 'same', differences, r.verdict);
  }
  for (const id of outcome.unfinished) settle(transcripts.get(id)!, 'skipped', ['interrupted before it finished']);
  return { fixtures: input.fixtureIds.map((id) => drifts.get(id)!).filter(Boolean), interrupted: input.signal.aborted };
}
