import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { scaffoldFixture } from '../fixtures/scaffold.js';

const CLI = fileURLToPath(new URL('../cli.js', import.meta.url));

/**
 * Ctrl-C during a selfcheck whose other fixture hangs: the time from SIGINT to the harness's
 * exit, sandboxes destroyed and what finished written (the e2e test checks that it happens).
 */
export async function benchInterrupt(): Promise<void> {
  const root = await mkdtemp(path.join(os.tmpdir(), 'rg-bench-interrupt-'));
  try {
    const dirs = { fixturesDir: path.join(root, 'fixtures'), oraclesDir: path.join(root, 'oracles') };
    await scaffoldFixture({ id: 'quick', runner: 'pytest', ...dirs });
    await scaffoldFixture({ id: 'hang', runner: 'pytest', ...dirs });
    await writeFile(path.join(dirs.fixturesDir, 'hang/test_calc.py'), 'import time\n\ndef test_hang():\n    time.sleep(3600)\n');
    const child = spawn(process.execPath, [CLI, 'selfcheck', '--concurrency', '2'], {
      cwd: root,
      env: { ...process.env, CI: 'true' },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let sentAt = 0;
    child.stderr.on('data', (d: Buffer) => {
      if (!sentAt && d.toString().includes('quick')) {
        sentAt = performance.now();
        child.kill('SIGINT');
      }
    });
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    const took = performance.now() - sentAt;
    console.log(
      `\nCtrl-C during a selfcheck with a hanging fixture: exit ${code} ${sentAt ? `${took.toFixed(0)} ms after SIGINT` : '(never interrupted)'} (target < 5 s, exit 130)`,
    );
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}
