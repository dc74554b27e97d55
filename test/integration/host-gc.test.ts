import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { gcLinkFolders } from '../../harness/sandbox/core/gc.js';
import { LINK_FOLDER_PREFIX, ownedFolderPrefix } from '../../harness/sandbox/core/owner.js';
import { gcHostFolders } from '../../harness/sandbox/host/gc.js';
import { backendCases } from '../helpers/backends.js';
import { REPO } from '../helpers/cli.js';
import { processesWith, uniqueSleep } from '../helpers/procs.js';

/** local, and bwrap where it can run (in CI it must: backendCases fails there without it). */
const hostBackends = (await backendCases()).map((c) => c.name).filter((n) => n === 'local' || n === 'bwrap');

describe('gc of host sandboxes left by a killed harness', () => {
  test.each(hostBackends)('%s: kill -9 of the harness, then gc kills the sandbox processes and removes the folder', async (backend) => {
    const t = uniqueSleep();
    // A folder of its own for sandboxes: a run another test starts meanwhile cleans dead harnesses' ones in the shared one.
    const base = await mkdtemp(path.join(os.tmpdir(), 'rg-gc-test-'));
    // A harness process that creates a sandbox, starts a long command and is then killed -9.
    const script = `
      const { ${backend === 'local' ? 'LocalBackend: B' : 'BwrapBackend: B'} } = await import(${JSON.stringify(path.join(REPO, 'dist/sandbox', backend === 'local' ? 'host/local.js' : 'bwrap/backend.js'))});
      const sb = await new B({ baseDir: ${JSON.stringify(base)} }).create({ runId: 'gc-test', fixtureId: 'gc' });
      console.log(JSON.stringify({ workdir: sb.workdir, id: sb.id }));
      await sb.exec('sleep ${t}');`;
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
    const line = await new Promise<string>((resolve) => child.stdout.once('data', (d: Buffer) => resolve(d.toString())));
    const { workdir, id } = JSON.parse(line) as { workdir: string; id: string };
    await expect.poll(() => processesWith(t).length, { timeout: 5000 }).toBeGreaterThan(0);
    child.kill('SIGKILL');
    await new Promise((r) => child.on('close', r));
    const removed = await gcHostFolders(base);
    if (backend === 'local') {
      // bwrap's --die-with-parent already ended its processes; a local sandbox's live on until gc.
      expect(removed.some((r) => workdir.startsWith(r))).toBe(true);
      expect(existsSync(workdir)).toBe(false);
    }
    expect(removed.length).toBeGreaterThan(0);
    expect(processesWith(t)).toEqual([]);
    // bwrap's per-sandbox cgroups go with the folder.
    for (const hierarchy of ['/sys/fs/cgroup/pids', '/sys/fs/cgroup/memory']) {
      if (existsSync(hierarchy)) expect(readdirSync(hierarchy)).not.toContain(`redgreen-${id}`);
      if (existsSync(hierarchy)) expect(readdirSync(hierarchy)).not.toContain(id.replace(/-[0-9a-f]{8}$/, ''));
    }
    await rm(base, { recursive: true, force: true });
  });

  test("a Docker link's folder left by a kill -9 goes; one whose harness lives stays", async () => {
    const base = await mkdtemp(path.join(os.tmpdir(), 'rg-gc-test-'));
    let child: ReturnType<typeof spawn> | undefined;
    try {
      // A harness that opens a link (its FIFOs made, its exit hook not yet run), then is killed -9.
      const script = `
      const { openLink } = await import(${JSON.stringify(path.join(REPO, 'dist/sandbox/docker/link.js'))});
      const link = await openLink();
      console.log(JSON.stringify({ dir: link.dir }));
      setInterval(() => undefined, 1000);`;
      child = spawn(process.execPath, ['--input-type=module', '-e', script], {
        stdio: ['ignore', 'pipe', 'inherit'],
        env: { ...process.env, TMPDIR: base },
      });
      const line = await new Promise<string>((resolve) => child!.stdout!.once('data', (d: Buffer) => resolve(d.toString())));
      const outer = path.dirname((JSON.parse(line) as { dir: string }).dir);
      expect(path.dirname(outer)).toBe(base);
      // The folder of a link this process holds (named as openLink names it): its harness lives.
      const mine = path.join(base, `${ownedFolderPrefix(LINK_FOLDER_PREFIX)}mine`);
      mkdirSync(mine);
      expect(await gcHostFolders(base)).toEqual([]);
      child.kill('SIGKILL');
      await new Promise((r) => child!.on('close', r));
      expect(existsSync(outer)).toBe(true);
      // An engine's gc takes link folders alone: a dry run names it and keeps it.
      expect(await gcLinkFolders(base, { dryRun: true })).toEqual([outer]);
      expect(existsSync(outer)).toBe(true);
      expect(await gcHostFolders(base)).toEqual([outer]);
      expect(existsSync(outer)).toBe(false);
      expect(existsSync(mine)).toBe(true);
    } finally {
      child?.kill('SIGKILL');
      await rm(base, { recursive: true, force: true });
    }
  });
});
