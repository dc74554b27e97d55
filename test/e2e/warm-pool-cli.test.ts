import { afterAll, describe, expect, test } from 'vitest';
import { diffTrees } from '../../harness/fixtures/scaffold.js';
import { runCli } from '../helpers/cli.js';
import { startE2BDouble } from '../helpers/e2b-server/server.js';
import { makeProject } from '../helpers/project.js';

// The E2B service's local TEST DOUBLE (a fake of the cloud, on loopback), which the CLI reaches
// as it would the service: through E2B_API_URL and E2B_SANDBOX_URL.
const double = await startE2BDouble();
afterAll(() => double.close());

const fixture = async () => ({
  manifest: { runner: 'exit-code', language: 'shell', test: { command: 'grep -qx fixed state.txt', timeoutSec: 30 } },
  files: { 'state.txt': 'broken\n' },
  oracle: await diffTrees({ 'state.txt': 'broken\n' }, { 'state.txt': 'fixed\n' }),
});

describe('a warm pool, as the CLI runs one', () => {
  test('selfcheck of two fixtures with --warm 8 creates two sandboxes: the pool makes none that no fixture takes', async () => {
    const project = await makeProject({ one: await fixture(), two: await fixture() });
    try {
      const r = await runCli(['selfcheck', '--backend', 'e2b', '--template', 'redgreen-test', '--warm', '8', '-j', '2'], {
        cwd: project.root,
        env: { E2B_API_KEY: 'test-key', E2B_API_URL: double.apiUrl, E2B_SANDBOX_URL: double.sandboxUrl },
      });
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toMatch(/valid: 2\/2/);
      expect(double.registry.history).toHaveLength(2);
      expect(double.alive()).toEqual([]);
    } finally {
      await project.cleanup();
    }
  });
});
