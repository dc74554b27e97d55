import { describe, expect, test } from 'vitest';
import { discoverFixtures } from '../../harness/fixtures/load.js';
import { E2BBackend } from '../../harness/sandbox/e2b/backend.js';
import { e2bBackendOptions, e2bDouble, runOnE2B } from '../helpers/backends-e2b.js';
import { useBundledCopy } from '../helpers/bundled.js';

const bundled = useBundledCopy();

/**
 * A full selfcheck of the bundled fixtures through the real pipeline, the e2b backend and the
 * official SDK, against the E2B test double. The vitest fixture's `npm ci` needs the network.
 */
describe('selfcheck of the bundled fixtures on the e2b backend (test double)', () => {
  test('every bundled fixture is valid, and no sandbox is left', { timeout: 600_000 }, async () => {
    const discovery = await discoverFixtures(await bundled());
    expect(discovery.fixtures.length).toBeGreaterThanOrEqual(8);
    const backend = new E2BBackend(e2bBackendOptions({ warm: 2 }));
    const { results, byId } = await runOnE2B(backend, discovery, { runId: `selfcheck-${process.pid}`, concurrency: 4 });
    for (const r of results) expect(`${r.fixtureId}: ${r.verdict} ${r.verdict === 'valid' ? '' : r.reason}`).toBe(`${r.fixtureId}: valid `);
    expect(byId.bug01_decimal_div?.backend).toBe('e2b');
    expect(byId.bug01_decimal_div?.red?.counts).toMatchObject({ failed: 3, passed: 2 });
    expect(e2bDouble.alive()).toEqual([]);
    expect(backend.stats()).toMatchObject({ live: 0, killFailures: 0 });
  });
});
