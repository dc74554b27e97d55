import { RedgreenError } from '../errors.js';
import type { UploadStats } from '../sandbox/core/types.js';
import type { FixtureContext } from './context.js';
import type { PhaseTimer } from './phase-timer.js';
import { runSetup } from './setup.js';
import { layerPlan, saveLayer, startFromLayer } from './workspace-layer-phase.js';

/** Why the workspace could not be made ready: setup timed out (the fixture's verdict is `timeout`). */
export interface WorkspaceTimeout {
  reason: string;
}

/**
 * Makes the sandbox's workspace what the fixture's tests need: copy-on-write from a prepared layer
 * where the backend can (no upload, no setup), else uploaded and set up (from the setup cache when
 * it can). `onLayer` is told the end of a layer's use, to call once the sandbox is destroyed.
 * A setup that fails throws SETUP_FAILED (retried once by the scheduler, then the fixture's), or
 * SETUP_NETWORK when it had the network and could not reach it (the machine's: infra_error).
 */
export async function prepareWorkspace(
  ctx: FixtureContext,
  timer: PhaseTimer,
  fixtureSha256: string,
  onLayer: (release: () => void) => void,
): Promise<WorkspaceTimeout | null> {
  const { sandbox: sb, fixture, emit } = ctx;
  const plan = await layerPlan(ctx, fixtureSha256);
  let uploaded: UploadStats | null = null;
  const layer = await timer.run('upload', async () => {
    const started = plan ? await startFromLayer(ctx, plan) : null;
    if (started) {
      onLayer(started.release);
      emit({ type: 'upload', files: 0, bytes: started.bytes, layer: plan!.key, ...(started.ahead ? { ahead: true } : {}) });
      return started;
    }
    uploaded = await sb.uploadDir(fixture.treeDir, { skip: fixture.treeSkip, ...(ctx.tree ? { tree: ctx.tree } : {}) });
    emit({ type: 'upload', ...uploaded });
    return null;
  });
  if (layer) {
    emit({ type: 'cache', key: plan!.key, hit: true, bytes: layer.bytes, paths: [], layer: true });
    return null;
  }
  // Keeping the workspace as a layer is part of setup: one setup phase in the transcript either way.
  const failure = await timer.run('setup', async () => {
    const failed = await runSetup(ctx);
    if (!failed && plan) await saveLayer(ctx, plan, uploaded!);
    return failed;
  });
  if (failure?.timedOut) return { reason: failure.reason };
  if (failure) throw new RedgreenError(failure.code, failure.reason);
  return null;
}
