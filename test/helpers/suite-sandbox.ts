import { afterAll, beforeAll } from 'vitest';
import type { Sandbox, SandboxBackend } from '../../harness/sandbox/core/types.js';

/**
 * One sandbox for the tests of a describe block, of a backend opened as a run opens it: made
 * before them, destroyed (and the backend closed) after. Returns its getter.
 */
export function suiteSandbox(backend: SandboxBackend, runId: string): () => Sandbox {
  let sb: Sandbox | undefined;
  beforeAll(async () => {
    await backend.open?.(runId);
    sb = await backend.create({ runId, fixtureId: runId });
  });
  afterAll(async () => {
    await sb?.destroy();
    await backend.close?.();
  });
  return () => sb!;
}
