import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { oracleProvider } from '../../harness/agents/static.js';
import { readFixture } from '../../harness/fixtures/fingerprint.js';
import { discoverFixtures } from '../../harness/fixtures/load.js';
import type { ProviderContext } from '../../harness/pipeline/provider.js';
import { PYTEST, useProjects } from '../helpers/project.js';

const project = useProjects();
const context = (oracle?: Buffer | null) =>
  ({
    runId: 't',
    signal: new AbortController().signal,
    emit: () => undefined,
    setupCache: null,
    ...(oracle !== undefined ? { oracle } : {}),
  }) as unknown as ProviderContext;

describe('the oracle provider', () => {
  test('grades the oracle its fixture’s fingerprint read, and reads it itself only when none was read', async () => {
    const p = await project({
      with: { manifest: PYTEST, files: { 'a.txt': 'a\n' }, oracle: 'the oracle on disk\n' },
      without: { manifest: PYTEST, files: { 'a.txt': 'a\n' } },
    });
    const { fixtures } = await discoverFixtures(p);
    const [withOracle, withoutOracle] = ['with', 'without'].map((id) => fixtures.find((f) => f.id === id)!);
    const read = await readFixture(withOracle!);
    expect(read.oracle?.toString()).toBe(await readFile(path.join(p.oraclesDir, 'with.patch'), 'utf8'));
    expect((await oracleProvider.patchFor(withOracle!, context(Buffer.from('as it was read\n')))).text).toBe('as it was read\n');
    expect((await oracleProvider.patchFor(withOracle!, context())).text).toBe('the oracle on disk\n');

    expect((await readFixture(withoutOracle!)).oracle).toBeNull();
    for (const ctx of [context(null), context()]) {
      const input = await oracleProvider.patchFor(withoutOracle!, ctx);
      expect(input.text).toBeNull();
      expect(input.missing).toContain('no oracle patch at');
    }
  });
});
