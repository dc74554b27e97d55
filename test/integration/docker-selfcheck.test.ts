import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { oracleProvider } from '../../harness/agents/static.js';
import { discoverFixtures } from '../../harness/fixtures/load.js';
import { runFixtures } from '../../harness/pipeline/scheduler.js';
import { SetupCache } from '../../harness/pipeline/setup-cache.js';
import { dockerClient } from '../../harness/sandbox/docker/client.js';
import { LABEL } from '../../harness/sandbox/docker/labels.js';
import { pruneLayers } from '../../harness/sandbox/docker/layers.js';
import { DockerBackend } from '../../harness/sandbox/docker/backend.js';
import type { SandboxBackend } from '../../harness/sandbox/core/types.js';
import { dockerTestOptions, dockerUnavailableReason } from '../helpers/backends-docker.js';
import { BUNDLED, useBundledCopy } from '../helpers/bundled.js';

const bundled = useBundledCopy();

const unavailable = dockerUnavailableReason();
if (unavailable && process.env.CI) throw new Error(`CI must run the Docker backend's tests: ${unavailable}`);

/** The bundled fixtures through the real scheduler, as `selfcheck --backend docker` runs them (open → run → close). */
describe.skipIf(unavailable)('selfcheck on docker', () => {
  let cacheDir: string;
  /** The setup cache of a backend's runs; the Docker backend is named `docker`. */
  const setupCache = (backend: string) => new SetupCache(path.join(cacheDir, backend));
  afterAll(async () => {
    // The layers the run kept on the engine go with the cache (else they wait for the next gc).
    if (cacheDir) await pruneLayers(dockerClient(), setupCache('docker').layers!.scope, { all: true });
    await rm(cacheDir, { recursive: true, force: true });
  });

  async function selfcheck(
    backend: SandboxBackend & { open?(runId: string): Promise<unknown>; close?(): Promise<void> },
    signal = new AbortController().signal,
    onRed?: () => void,
  ) {
    cacheDir ??= await mkdtemp(path.join(os.tmpdir(), 'rg-docker-cache-'));
    const discovery = await discoverFixtures(await bundled());
    const runId = `docker-selfcheck-${backend.name}`;
    await backend.open?.(runId);
    try {
      return await runFixtures({
        ...discovery,
        backend,
        runId,
        mode: 'selfcheck',
        provider: oracleProvider,
        concurrency: 2,
        repeat: 1,
        retryBaseMs: 10,
        signal,
        setupCache: setupCache(backend.name),
        observer: { onEvent: (_id, e) => void (e.type === 'phase' && e.phase === 'red' && e.status === 'start' && onRed?.()) },
      });
    } finally {
      await backend.close?.();
    }
  }

  // Every bundled fixture is valid on the local backend (the e2e suite's recorded selfcheck says
  // so): on docker each must come out the same, valid.
  test('every bundled fixture gets the same verdict as on the local backend: valid', async () => {
    const outcome = await selfcheck(new DockerBackend(dockerTestOptions({ pool: 2 })));
    const verdicts = Object.fromEntries(
      outcome.results.map((r) => [r.fixtureId, `${r.verdict}${r.verdict === 'valid' ? '' : `: ${r.reason}`}`]),
    );
    expect(verdicts).toEqual(Object.fromEntries(BUNDLED.map((id) => [id, 'valid'])));
  });

  test('an interrupted run leaves no container and no volume behind', async () => {
    const backend = new DockerBackend(dockerTestOptions({ pool: 2 }));
    const controller = new AbortController();
    const outcome = await selfcheck(backend, controller.signal, () => controller.abort());
    expect(outcome.unfinished.length).toBeGreaterThan(0);
    const docker = dockerClient();
    const label = `${LABEL.session}=${backend.session}`;
    expect(await docker.listContainers({ all: true, filters: { label: [label] } })).toEqual([]);
    expect((await docker.listVolumes({ filters: { label: [label] } })).Volumes ?? []).toEqual([]);
  });
});
