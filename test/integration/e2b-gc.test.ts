import { spawnSync } from 'node:child_process';
import { Sandbox } from 'e2b';
import { describe, expect, test } from 'vitest';
import { E2BBackend } from '../../harness/sandbox/e2b/backend.js';
import { gcSandboxes, runMetadata } from '../../harness/sandbox/e2b/gc.js';
import { e2bBackendOptions, e2bDouble } from '../helpers/backends-e2b.js';

/** Orphans: sandboxes are labelled with their run and owner; gc kills those whose owner is gone. */
describe('e2b gc', () => {
  const conn = () => ({ apiKey: 'test-key', apiUrl: e2bDouble.apiUrl, sandboxUrl: e2bDouble.sandboxUrl });
  const make = (metadata: Record<string, string>) => Sandbox.create('redgreen-test', { ...conn(), metadata }).then((s) => s.sandboxId);

  test('a run starts by killing sandboxes of dead runs on this host; live, foreign and unlabelled ones stay', async () => {
    const deadPid = spawnSync('true').pid!;
    const dead = await make({ ...runMetadata('old-run', 's1'), 'redgreen.pid': String(deadPid) });
    const recycled = await make({ ...runMetadata('recycled-run', 's2'), 'redgreen.pidstart': '1' });
    const live = await make(runMetadata('live-run', 's3'));
    const foreign = await make({ ...runMetadata('far-run', 's4'), 'redgreen.host': 'another-host' });
    const unlabelled = await make({ owner: 'someone else' });

    const backend = new E2BBackend(e2bBackendOptions());
    const report = await backend.open(`gc-${process.pid}`);
    expect(report.killed.sort()).toEqual([dead, recycled].sort());
    expect(Object.fromEntries(report.kept.map((k) => [k.id, k.why]))).toMatchObject({
      [live]: 'its run is alive',
      [foreign]: expect.stringContaining('another-host'),
    });
    expect(e2bDouble.alive()).toEqual(expect.arrayContaining([live, foreign, unlabelled]));
    expect(e2bDouble.alive()).not.toContain(dead);

    const dry = await gcSandboxes({ connection: backend.connection, runIds: ['far-run'], dryRun: true });
    expect(dry.killed).toEqual([foreign]);
    expect(e2bDouble.alive()).toContain(foreign);

    const hosts = await gcSandboxes({ connection: backend.connection, allHosts: true });
    expect(hosts.killed).toEqual([foreign]);
    expect(hosts.kept.map((k) => k.id)).toEqual([live]);
    const named = await gcSandboxes({ connection: backend.connection, runIds: ['live-run'] });
    expect(named.killed).toEqual([live]);
    expect(e2bDouble.alive()).toEqual([unlabelled]);
    await Sandbox.kill(unlabelled, conn());
    await backend.close();
  });

  test('close() kills every sandbox of the run, the pool included, and is idempotent', async () => {
    const runId = `close-${process.pid}`;
    const backend = new E2BBackend(e2bBackendOptions({ warm: 2 }));
    await backend.open(runId);
    const a = await backend.create({ runId, fixtureId: 'a' });
    await backend.warmed();
    expect(e2bDouble.alive()).toContain(a.id);
    await Promise.all([backend.close(), backend.close()]);
    expect(e2bDouble.registry.history.filter((h) => h.metadata['redgreen.run'] === runId && h.killedBy !== 'api')).toEqual([]);
    expect(e2bDouble.alive()).toEqual([]);
    await expect(backend.create({ runId, fixtureId: 'b' })).rejects.toMatchObject({ code: 'SANDBOX_FAILED' });
  });
});
