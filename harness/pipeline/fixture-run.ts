import { describeError, isRedgreenError, RedgreenError } from '../errors.js';
import type { Fixture } from '../fixtures/load.js';
import { Staging } from '../patch/apply.js';
import type { Sandbox, SandboxBackend } from '../sandbox/types.js';
import { scoreSelfcheck, type Scored } from '../scoring/selfcheck.js';
import { observeTransitions } from '../scoring/observe.js';
import { runCommand, type FixtureContext } from './context.js';
import type { FixtureEvent } from './events.js';
import { applyPatch, FIXTURE_META_FILES, inspectPatch, type PatchInput } from './patch-phase.js';
import type { FixtureResult, PatchSummary, Phase, TestPhase } from './result.js';
import { runTests } from './test-phase.js';
import { adapterFor } from '../results/index.js';

export interface FixtureRunOptions {
  fixture: Fixture;
  fixtureSha256: string;
  backend: SandboxBackend;
  runId: string;
  patch: PatchInput;
  repeat: number;
  signal: AbortSignal;
  emit: (event: FixtureEvent) => void;
}

/**
 * One fixture's life: create → upload → setup → RED → patch → GREEN → score, with the sandbox
 * destroyed in `finally` whatever happens. Throws only when interrupted.
 */
export async function runFixture(o: FixtureRunOptions): Promise<FixtureResult> {
  const { fixture, emit } = o;
  const startedAt = new Date();
  const t0 = performance.now();
  const timings: Record<string, number> = {};
  let current: Phase | null = null;
  const phase = async <T>(name: Phase, fn: () => Promise<T>): Promise<T> => {
    current = name;
    emit({ type: 'phase', phase: name, status: 'start' });
    const s = performance.now();
    try {
      return await fn();
    } finally {
      timings[name] = Math.round((performance.now() - s) * 10) / 10;
      emit({ type: 'phase', phase: name, status: 'end', durationMs: timings[name] });
    }
  };

  emit({ type: 'fixture', fixtureId: fixture.id, title: fixture.manifest.title, runner: fixture.manifest.runner, backend: o.backend.name, fixtureSha256: o.fixtureSha256 });
  if (!adapterFor(fixture.manifest.runner)) {
    const reason = `runner "${fixture.manifest.runner}" is not supported by this version of redgreen`;
    emit({ type: 'verdict', verdict: 'invalid_fixture', reason });
    return { fixtureId: fixture.id, title: fixture.manifest.title, runner: fixture.manifest.runner, verdict: 'invalid_fixture', reason, backend: o.backend.name, sandboxId: null, startedAt: startedAt.toISOString(), durationMs: 0, timings, red: null, green: null, patch: null, observed: null };
  }
  const inspected = await inspectPatch(o.patch, fixture);
  let sandbox: Sandbox | null = null;
  let staging: Promise<Staging> | null = null;
  let red: TestPhase | null = null;
  let green: TestPhase | null = null;
  let patch: PatchSummary | null = null;
  let scored: Scored;
  let error: { code: string; message: string } | undefined;
  try {
    sandbox = await phase('create', () => o.backend.create({ runId: o.runId, fixtureId: fixture.id, ...(fixture.manifest.image ? { image: fixture.manifest.image } : {}) }));
    const sb = sandbox;
    emit({ type: 'sandbox', sandboxId: sb.id, backend: sb.backend, workdir: sb.workdir });
    const ctx: FixtureContext = { fixture, sandbox: sb, signal: o.signal, emit };
    const stats = await phase('upload', () => sb.uploadDir(fixture.dir, { skip: FIXTURE_META_FILES }));
    emit({ type: 'upload', ...stats });
    // The staging copy for the patch is made while setup and RED run.
    staging = inspected.parsed ? Staging.create(fixture.dir, FIXTURE_META_FILES) : null;
    staging?.catch(() => undefined);
    const setupFailure = await phase('setup', () => runSetup(ctx));
    if (setupFailure) {
      scored = { verdict: setupFailure.timedOut ? 'timeout' : 'infra_error', reason: setupFailure.reason };
    } else {
      red = await phase('red', () => runTests(ctx, 'red', o.repeat));
      if (red.state !== 'timeout') {
        const stage = staging;
        patch = await phase('patch', () => applyPatch(ctx, inspected, stage));
        if (patch.status === 'applied') green = await phase('green', () => runTests(ctx, 'green', o.repeat));
      }
      scored = scoreSelfcheck(fixture.manifest.tests, red, patch ?? inspected.summary, green);
    }
  } catch (e) {
    if (o.signal.aborted || isRedgreenError(e, 'INTERRUPTED')) throw new RedgreenError('INTERRUPTED', 'interrupted', undefined, { cause: e });
    error = { code: isRedgreenError(e) ? e.code : 'INTERNAL', message: describeError(e) };
    emit({ type: 'error', phase: current, code: error.code, message: error.message });
    scored = { verdict: 'infra_error', reason: `${current ?? 'run'}: ${error.message}` };
  } finally {
    const sb = sandbox as Sandbox | null;
    if (sb) await phase('destroy', () => sb.destroy());
    await staging?.then((s) => s.dispose(), () => undefined);
  }
  emit({ type: 'verdict', verdict: scored.verdict, reason: scored.reason });
  return {
    fixtureId: fixture.id,
    title: fixture.manifest.title,
    runner: fixture.manifest.runner,
    verdict: scored.verdict,
    reason: scored.reason,
    backend: o.backend.name,
    sandboxId: (sandbox as Sandbox | null)?.id ?? null,
    startedAt: startedAt.toISOString(),
    durationMs: Math.round(performance.now() - t0),
    timings,
    red,
    green,
    patch: patch ?? inspected.summary,
    observed: red && green ? observeTransitions(red, green) : null,
    ...(error ? { error } : {}),
  };
}

/** Runs the manifest's setup commands within one time budget; returns why it failed, if it did. */
async function runSetup(ctx: FixtureContext): Promise<{ reason: string; timedOut: boolean } | null> {
  const setup = ctx.fixture.manifest.setup;
  if (!setup?.commands.length) return null;
  const deadline = performance.now() + setup.timeoutSec * 1000;
  for (const [i, command] of setup.commands.entries()) {
    const left = Math.max(1, Math.round(deadline - performance.now()));
    const r = await runCommand(ctx, 'setup', `setup #${i + 1}`, command, { timeoutMs: left, network: setup.network });
    if (r.aborted) throw new RedgreenError('INTERRUPTED', 'interrupted');
    if (r.timedOut) return { reason: `setup timed out after ${setup.timeoutSec}s: ${command}`, timedOut: true };
    if (r.exitCode !== 0) {
      const tail = (r.stderr || r.stdout).trim().split('\n').slice(-3).join(' | ');
      return { reason: `setup command failed (exit ${r.exitCode}): ${command}${tail ? ` — ${tail}` : ''}`, timedOut: false };
    }
  }
  return null;
}
