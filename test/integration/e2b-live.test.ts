import { describe, expect, test } from 'vitest';
import { discoverFixtures } from '../../harness/fixtures/load.js';
import { E2BBackend } from '../../harness/sandbox/e2b/backend.js';
import { listLabelled, runLabels } from '../../harness/sandbox/e2b/gc.js';
import { runOnE2B } from '../helpers/backends-e2b.js';
import { useBundledCopy } from '../helpers/bundled.js';

const bundled = useBundledCopy(['bug02_off_by_one']);

/**
 * The e2b backend against a REAL E2B-compatible service. This is the one test allowed to skip:
 * no E2B service is reachable from the machines this suite normally runs on, so it runs only when
 * E2B_API_KEY is set (with E2B_API_URL / E2B_DOMAIN for a self-hosted E2B or a CubeSandbox, and
 * E2B_USER=root for CubeSandbox's legacy envd):
 *
 *   E2B_API_KEY=e2b_… E2B_TEMPLATE=<template with python3, pytest, node, git> npx vitest run test/integration/e2b-live.test.ts
 *
 * Without E2B_TEMPLATE it uses E2B's `base` template and skips the selfcheck (base has no pytest).
 */
const live = Boolean(process.env.E2B_API_KEY);
const template = process.env.E2B_TEMPLATE ?? 'base';
const options = () => ({ template, ...(process.env.E2B_USER ? { user: process.env.E2B_USER } : {}), warm: 0 });

describe.skipIf(!live)('e2b backend against the live service (E2B_API_KEY is set)', () => {
  test('create, upload, exec, timeout kill, files, destroy — and nothing left behind', { timeout: 180_000 }, async () => {
    const runId = `live-${process.pid}-${Date.now()}`;
    const backend = new E2BBackend(options());
    await backend.open(runId);
    try {
      const sb = await backend.create({ runId, fixtureId: 'live' });
      const r = await sb.exec('echo out; echo err >&2; exit 3');
      expect(r).toMatchObject({ exitCode: 3, stdout: 'out\n', stderr: 'err\n' });
      const bytes = Buffer.from(Array.from({ length: 256 }, (_, i) => i));
      await sb.writeFiles([{ path: 'bin/all.dat', content: bytes }]);
      expect(Buffer.compare(await sb.readFile('bin/all.dat'), bytes)).toBe(0);
      const slow = await sb.exec('sleep 300 & setsid sleep 300 & sleep 300', { timeoutMs: 2000 });
      expect(slow.timedOut).toBe(true);
      expect((await sb.exec('ps -eo args | grep -c "^sleep 300" || true')).stdout.trim()).toBe('0');
      await expect(sb.writeFiles([{ path: '../escape', content: 'x' }])).rejects.toMatchObject({ code: 'SANDBOX_PATH_UNSAFE' });
      await sb.destroy();
    } finally {
      await backend.close();
    }
    expect(await listLabelled(backend.connection, runLabels(runId))).toEqual([]);
  });

  test.runIf(Boolean(process.env.E2B_TEMPLATE))(
    'selfcheck of a bundled pytest fixture on the live service',
    { timeout: 300_000 },
    async () => {
      const discovery = await discoverFixtures(await bundled(), ['bug02_off_by_one']);
      const runId = `live-selfcheck-${process.pid}-${Date.now()}`;
      const backend = new E2BBackend(options());
      const { byId } = await runOnE2B(backend, discovery, { runId });
      expect(byId.bug02_off_by_one?.verdict).toBe('valid');
      expect(await listLabelled(backend.connection, runLabels(runId))).toEqual([]);
    },
  );
});
