import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { BwrapBackend } from '../../harness/sandbox/bwrap/backend.js';
import { MIB } from '../../harness/sandbox/core/limits.js';
import type { SandboxBackend } from '../../harness/sandbox/core/types.js';
import { DockerBackend } from '../../harness/sandbox/docker/backend.js';
import { podmanClient } from '../../harness/sandbox/podman/client.js';
import { backendCases } from '../helpers/backends.js';
import { dockerTestOptions } from '../helpers/backends-docker.js';
import { makeProject, PYTEST, selfcheckProject, type Project } from '../helpers/project.js';

const MEMORY_MB = 256;
const DISK_MB = 64;

/**
 * The backends that enforce sandbox limits, each with small ones so a test reaches them quickly
 * and cheaply. bwrap limits the sandbox's size with a tmpfs mount, which needs root.
 */
const engine = (extra: Parameters<typeof dockerTestOptions>[0] = {}) =>
  new DockerBackend(
    dockerTestOptions({ limits: { memoryBytes: MEMORY_MB * MIB, cpus: 1, pids: 512, diskBytes: DISK_MB * MIB }, ...extra }),
  );
const LIMITED: Record<string, () => SandboxBackend> = {
  bwrap: () => new BwrapBackend({ limits: { memoryMb: MEMORY_MB, diskMb: DISK_MB } }),
  docker: () => engine(),
  podman: () => engine({ docker: podmanClient(), name: 'podman' }),
};
/** The backends that cap the workspace's size. */
const SIZED = ['bwrap', 'docker'];
const available = (await backendCases()).map((c) => c.name).filter((n) => n in LIMITED && (n !== 'bwrap' || process.getuid?.() === 0));

/** The oracle "fixes" store.save by writing far more than the sandbox may hold: 5 GB, or a 1 GiB string in memory. */
const STORE = 'def save(path):\n    pass\n\ndef remember():\n    return None\n';
const STORE_TEST =
  'import os\nfrom store import save, remember\n\n' +
  "def test_save():\n    save('big.bin')\n    assert os.path.getsize('big.bin') == 5 * 1024 ** 3\n\n" +
  'def test_remember():\n    assert remember() is not None\n';
const oracle = (...body: string[]) =>
  `--- a/store.py\n+++ b/store.py\n@@ -1,5 +1,${4 + body.length} @@\n def save(path):\n-    pass\n${body.map((l) => `+${l}\n`).join('')} \n def remember():\n     return None\n`;

// With none here (no engine, bwrap without root) the suite is one skipped entry, not a file without tests.
describe.skipIf(!available.length).each(available.length ? available : ['none here'])('sandbox limits: %s', (name) => {
  const projects: Project[] = [];
  let disk: Project;
  let memory: Project;
  let backend: SandboxBackend & { open?(runId: string): Promise<unknown>; close?(): Promise<void> };

  beforeAll(async () => {
    const files = { 'store.py': STORE, 'test_store.py': STORE_TEST };
    disk = await makeProject({
      disk: {
        manifest: PYTEST,
        files,
        oracle: oracle("    with open(path, 'wb') as f:", "        for _ in range(5 * 1024): f.write(b'x' * 1024 * 1024)"),
      },
    });
    memory = await makeProject({ memory: { manifest: PYTEST, files, oracle: oracle("    open(path, 'wb').write(b'x' * 1024 ** 3)") } });
    projects.push(disk, memory);
    backend = LIMITED[name]!();
    await backend.open?.('limits');
  });
  afterAll(async () => {
    await backend?.close?.();
    await Promise.all(projects.map((p) => p.cleanup()));
  });

  test('a test allocating past the memory limit is killed, and the verdict names the limit', async () => {
    const { byId } = await selfcheckProject(memory, { backend });
    expect(byId.memory?.verdict).toBe('not_green');
    expect(byId.memory?.reason).toContain(`killed: out of memory (limit ${MEMORY_MB} MiB)`);
  });

  // Podman before 4.4 (Debian bookworm's) refuses a size on a tmpfs volume: it has no size limit
  // (README), so 5 GB must not be written there.
  if (SIZED.includes(name))
    test('a test writing 5 GB is stopped at the size limit, and the verdict names it', async () => {
      await (await backend.create({ runId: 'limits', fixtureId: 'probe' })).destroy();
      expect((backend as { sizedVolumes?: boolean }).sizedVolumes).not.toBe(false);
      const { byId } = await selfcheckProject(disk, { backend });
      expect(byId.disk?.verdict).toBe('not_green');
      expect(byId.disk?.reason).toMatch(new RegExp(`no space left: .* is full \\(size limit ${DISK_MB} MiB\\)`));
    });
});
