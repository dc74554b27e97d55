import path from 'node:path';
import { describeError, isRedgreenError, RedgreenError } from '../errors.js';
import { issueProblem } from '../fixtures/issue.js';
import type { Fixture } from '../fixtures/load.js';
import type { ApplyOutcome } from '../patch/apply.js';
import type { ReadTree } from '../sandbox/core/tree.js';
import type { Sandbox, SandboxBackend } from '../sandbox/core/types.js';
import { checkBaseline, scoreAgent } from '../scoring/agent.js';
import { observeTransitions } from '../scoring/observe.js';
import { refuseBeforeRun } from '../scoring/refusal.js';
import { scoreSelfcheck } from '../scoring/selfcheck.js';
import type { FixtureContext } from './context.js';
import type { SetupCache } from './setup-cache.js';
import type { FixtureEvent } from './events.js';
import { applyPatch, inspectPatch, patchEvent, preparePatch, type InspectedPatch } from './patch-phase.js';
import { PhaseTimer } from './phase-timer.js';
import type { PatchProvider } from './provider.js';
import type { FixtureResult, PatchSummary, TestPhase } from './result.js';
import { runTests } from './test-phase.js';
import { prepareWorkspace } from './workspace-phase.js';
import { baselineInOwnSandbox, SharedBaselines, type Baseline } from './baseline-phase.js';

export interface FixtureRunOptions {
  mode: 'selfcheck' | 'run';
  fixture: Fixture;
  fixtureSha256: string;
  /** The fixture's tree as its fingerprint read it (FixtureContext.tree). */
  tree?: ReadTree | null;
  /** The fixture's oracle as its fingerprint read it (ProviderContext.oracle). */
  oracle?: Buffer | null;
  backend: SandboxBackend;
  runId: string;
  provider: PatchProvider;
  repeat: number;
  /** Run mode: run the unpatched tests first (RED baseline). Selfcheck always does. */
  baseline: boolean;
  /** `run --strict`: a patch the audit flags is rejected (never applied), not only marked suspicious. */
  strict?: boolean;
  signal: AbortSignal;
  emit: (event: FixtureEvent) => void;
  setupCache?: SetupCache | null;
  /** Several models graded at once: each fixture's RED baseline runs once, for all of them (baseline-phase.ts). */
  baselines?: SharedBaselines | null;
  /** performance.now() when the run started: phases are placed on the run's timeline. */
  clock0?: number;
  slot?: number;
}

type Graded = Pick<FixtureResult, 'verdict' | 'reason'> & Partial<Pick<FixtureResult, 'failToPass' | 'passToPass' | 'flakyDependence'>>;

/**
 * One fixture's life: [agent] → create → workspace (a prepared layer, or upload and setup) → RED →
 * patch → GREEN → score, with the sandbox destroyed in `finally` whatever happens. With several
 * models (`baselines`), RED comes first from a sandbox of its own, shared by all of them. Throws
 * only when interrupted.
 */
export async function runFixture(o: FixtureRunOptions): Promise<FixtureResult> {
  const { fixture, emit, mode } = o;
  const startedAt = new Date();
  const t0 = performance.now();
  const timer = new PhaseTimer(emit, o.clock0);
  let sandbox: Sandbox | null = null;
  /** The patch applied to the fixture's files on the host, once (a run checks it before any sandbox). */
  let prepared: Promise<ApplyOutcome> | null = null;
  /** What score() hands back for the end: the prepared patch, the end of a layer's use. */
  const hold: Held = { keep: (p) => (prepared = p), layerRelease: null };
  let red: TestPhase | null = null;
  let green: TestPhase | null = null;
  let patch: PatchSummary | null = null;
  let graded: Graded | null = null;
  let error: { code: string; message: string } | undefined;
  /** The run whose RED baseline this fixture's grading used, when another run made it. */
  let baselineFrom: string | undefined;

  emit({
    type: 'fixture',
    fixtureId: fixture.id,
    title: fixture.manifest.title,
    runner: fixture.manifest.runner,
    backend: o.backend.name,
    fixtureSha256: o.fixtureSha256,
  });
  try {
    const invalid = await precheck(fixture, mode, o.tree?.contents.get(path.relative(fixture.dir, fixture.issuePath)));
    if (invalid) {
      graded = { verdict: 'invalid_fixture', reason: invalid };
    } else {
      const ctx = {
        backend: o.backend,
        runId: o.runId,
        signal: o.signal,
        emit,
        setupCache: o.setupCache ?? null,
        ...(o.oracle !== undefined ? { oracle: o.oracle } : {}),
        ...(o.tree ? { tree: o.tree } : {}),
      };
      const input =
        o.provider.kind === 'agent'
          ? await timer.run('agent', () => o.provider.patchFor(fixture, ctx))
          : await o.provider.patchFor(fixture, ctx);
      const inspected = await inspectPatch(input, fixture, { allowEmpty: mode === 'run', strict: mode === 'run' && !!o.strict });
      patch = inspected.summary;
      if (input.agentError) graded = { verdict: 'agent_error', reason: input.agentError };
      else if (input.timedOut) graded = { verdict: 'timeout', reason: input.missing ?? 'the agent hit its time limit' };
      else {
        // Run mode: a patch that is missing, unsafe, empty or does not apply to the fixture (tried
        // on the host) gets its verdict before any sandbox, setup or RED run.
        if (mode === 'run' && inspected.parsed) {
          prepared = preparePatch(inspected, fixture, { fuzzy: true, tree: o.tree ?? null });
          patch = await timer.run('patch', () => preparedOutcome(inspected, prepared!));
        }
        const refused = mode === 'run' ? refuseBeforeRun(fixture.manifest.tests, patch, { gradeEmpty: !!o.provider.gradesEmpty }) : null;
        if (refused) {
          // Nothing of a refused patch is ever written anywhere; the transcript still shows it.
          emit(patchEvent(patch, inspected.text));
          graded = refused;
        } else {
          // Several models: the fixture's setup and RED baseline once, in a sandbox of their own, for all of them.
          if (mode === 'run' && o.baseline && o.baselines) {
            const shared = await sharedBaseline(o, timer);
            if (shared.runId !== o.runId) baselineFrom = shared.runId;
            if ('red' in shared.baseline) red = shared.baseline.red;
            graded = judgeBaseline(fixture, shared.baseline, patch ?? inspected.summary);
          }
          if (!graded) {
            sandbox = await timer.run('create', () =>
              o.backend.create({
                runId: o.runId,
                fixtureId: fixture.id,
                ...(fixture.manifest.image ? { image: fixture.manifest.image } : {}),
              }),
            );
            const out = await score(o, timer, sandbox, inspected, prepared, hold, red);
            ({ red, green, patch, graded } = out);
          }
        }
      }
    }
  } catch (e) {
    if (o.signal.aborted || isRedgreenError(e, 'INTERRUPTED'))
      throw new RedgreenError('INTERRUPTED', 'interrupted', undefined, { cause: e });
    error = { code: isRedgreenError(e) ? e.code : 'INTERNAL', message: describeError(e) };
    emit({ type: 'error', phase: timer.current, code: error.code, message: error.message });
    graded = { verdict: 'infra_error', reason: `${timer.current ?? 'run'}: ${error.message}` };
  } finally {
    const sb = sandbox as Sandbox | null;
    if (sb) await timer.run('destroy', () => sb.destroy());
    // Unmounted by destroy: the sandbox no longer uses its prepared layer.
    hold.layerRelease?.();
    // The git fallback's copy is removed when its apply ends: wait for it, so nothing outlives the run.
    await (prepared as Promise<ApplyOutcome> | null)?.catch(() => undefined);
  }
  graded ??= { verdict: 'infra_error', reason: 'no verdict was reached' };
  emit({ type: 'verdict', verdict: graded.verdict, reason: graded.reason });
  const { verdict, reason, ...grading } = graded;
  return {
    fixtureId: fixture.id,
    title: fixture.manifest.title,
    runner: fixture.manifest.runner,
    // The verdict first, as report.json has always shown it (its schema's order).
    verdict,
    reason,
    backend: o.backend.name,
    sandboxId: (sandbox as Sandbox | null)?.id ?? null,
    startedAt: startedAt.toISOString(),
    durationMs: Math.round(performance.now() - t0),
    timings: timer.timings,
    spans: timer.spans,
    ...(o.slot !== undefined ? { slot: o.slot } : {}),
    red,
    green,
    patch,
    observed: red && green ? observeTransitions(red, green) : null,
    ...(mode === 'run' ? { subject: o.provider.subject } : {}),
    ...(baselineFrom ? { baselineFrom } : {}),
    ...(error ? { error } : {}),
    ...grading,
  };
}

/**
 * The most sandboxes runFixture creates for one fixture: an agent's own, a shared RED baseline's
 * (several models graded at once), and the fixture's. A run tells its backend the total
 * (SandboxBackend.open), so that a warm pool makes none that no fixture would take.
 */
export function sandboxesPerFixture(o: { mode: FixtureRunOptions['mode']; agent: boolean; sharedBaselines: boolean }): number {
  return 1 + (o.agent ? 1 : 0) + (o.mode === 'run' && o.sharedBaselines ? 1 : 0);
}

/** The shared RED baseline of this fixture: an earlier run's (said so in the transcript), or computed now. */
async function sharedBaseline(o: FixtureRunOptions, timer: PhaseTimer): Promise<{ baseline: Baseline; runId: string }> {
  const key = SharedBaselines.key(o.fixtureSha256, o.backend.name, o.repeat);
  const shared = await o.baselines!.get(key, o.runId, () => baselineInOwnSandbox(o, timer));
  if (shared.runId !== o.runId)
    o.emit({ type: 'baseline', sharedFrom: shared.runId, state: 'red' in shared.baseline ? shared.baseline.red.state : 'timeout' });
  return shared;
}

/** What a baseline alone decides: a setup that timed out, a fixture that is not RED as declared, RED tests that hung. */
function judgeBaseline(fixture: Fixture, baseline: Baseline, patch: PatchSummary): Graded | null {
  if ('setupTimeout' in baseline) return { verdict: 'timeout', reason: baseline.setupTimeout };
  const invalid = checkBaseline(fixture.manifest.tests, baseline.red);
  if (invalid) return { verdict: 'invalid_fixture', reason: invalid };
  if (baseline.red.state === 'timeout') return scoreSelfcheck(fixture.manifest.tests, baseline.red, patch, null);
  return null;
}

/** The inspected patch as the fixture takes it: applied (its files kept for the sync after RED) or why not. */
async function preparedOutcome(inspected: InspectedPatch, prepared: Promise<ApplyOutcome>): Promise<PatchSummary> {
  const outcome = await prepared;
  if (outcome.status === 'applied') return inspected.summary;
  return { ...inspected.summary, status: outcome.status, ...(outcome.reason ? { reason: outcome.reason } : {}) };
}

/** Reasons a fixture cannot be graded at all, found without running anything. */
async function precheck(fixture: Fixture, mode: FixtureRunOptions['mode'], issueBytes?: Buffer): Promise<string | null> {
  const issue = await issueProblem(fixture, issueBytes);
  if (issue) return issue;
  if (mode === 'run' && !fixture.manifest.tests.failToPass.length) {
    return 'tests.failToPass is empty, so nothing can be resolved: run `redgreen selfcheck <id> --write` first';
  }
  return null;
}

type Scored = { red: TestPhase | null; green: TestPhase | null; patch: PatchSummary; graded: Graded };

interface Held {
  keep: (p: Promise<ApplyOutcome> | null) => void;
  layerRelease: (() => void) | null;
}

async function score(
  o: FixtureRunOptions,
  timer: PhaseTimer,
  sb: Sandbox,
  inspected: InspectedPatch,
  staged: Promise<ApplyOutcome> | null,
  hold: Held,
  /** The RED baseline when it was run elsewhere (shared by several models). */
  baseline: TestPhase | null,
): Promise<Scored> {
  const { fixture, emit } = o;
  const tests = fixture.manifest.tests;
  let red: TestPhase | null = baseline;
  let green: TestPhase | null = null;
  let patch: PatchSummary = inspected.summary;
  emit({ type: 'sandbox', sandboxId: sb.id, backend: sb.backend, workdir: sb.workdir });
  const ctx: FixtureContext = { fixture, sandbox: sb, signal: o.signal, emit, setupCache: o.setupCache ?? null, tree: o.tree ?? null };
  // The patch is applied on the host while the workspace is made ready and RED runs (a run did it already).
  const prepared = staged ?? preparePatch(inspected, fixture, { fuzzy: o.mode === 'run', tree: ctx.tree });
  prepared?.catch(() => undefined);
  hold.keep(prepared);
  const timedOut = await prepareWorkspace(ctx, timer, o.fixtureSha256, (release) => (hold.layerRelease = release));
  if (timedOut) return { red, green, patch, graded: { verdict: 'timeout', reason: timedOut.reason } };
  if (o.mode === 'selfcheck' || (o.baseline && !baseline)) {
    red = await timer.run('red', () => runTests(ctx, 'red', o.repeat));
    const invalid = o.mode === 'run' ? checkBaseline(tests, red) : null;
    if (invalid) return { red, green, patch, graded: { verdict: 'invalid_fixture', reason: invalid } };
    if (red.state === 'timeout') return { red, green, patch, graded: scoreSelfcheck(tests, red, patch, null) };
  }
  patch = await timer.run('patch', () => applyPatch(ctx, inspected, prepared));
  if (patch.status === 'applied') green = await timer.run('green', () => runTests(ctx, 'green', o.repeat));
  const graded: Graded = o.mode === 'selfcheck' ? scoreSelfcheck(tests, red!, patch, green) : scoreAgent(tests, patch, green);
  return { red, green, patch, graded };
}
