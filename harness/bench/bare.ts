import { cp, mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import type { Fixture } from '../fixtures/load.js';
import { timeIt } from './stats.js';

/**
 * The bare work a harness cannot avoid, done by hand: copy the fixture, run setup, run the
 * tests, `git apply` the oracle, run the tests again. The harness's overhead is measured against it.
 */
export async function bareWork(f: Fixture): Promise<Record<string, number>> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'rg-bench-bare-'));
  const sh = (cmd: string, timeout: number) =>
    execa('sh', ['-c', cmd], {
      cwd: dir,
      reject: false,
      timeout,
      env: { ...f.manifest.env, npm_config_cache: path.join(os.homedir(), '.cache/redgreen/npm') },
    });
  const t: Record<string, number> = {};
  try {
    t.copy = await timeIt(() =>
      cp(f.treeDir, dir, { recursive: true, filter: (src) => !/(^|\/)(fixture\.json|ISSUE\.md|node_modules)$/.test(src) }),
    );
    t.setup = await timeIt(async () => {
      for (const c of f.manifest.setup?.commands ?? []) await sh(c, f.manifest.setup!.timeoutSec * 1000);
    });
    t.red = await timeIt(() => sh(f.manifest.test.command, f.manifest.test.timeoutSec * 1000));
    const patch = await readFile(f.oraclePath, 'utf8');
    t.patch = await timeIt(() => execa('git', ['apply', '-'], { cwd: dir, input: patch }));
    t.green = await timeIt(() => sh(f.manifest.test.command, f.manifest.test.timeoutSec * 1000));
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
  return t;
}
