import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { EXEC_HELPER_BASE64 } from '../../harness/sandbox/docker/exec-helper.js';
import { REPO } from '../helpers/cli.js';
import { useTempDirs } from '../helpers/temp-dirs.js';

const gcc = spawnSync('gcc', ['--version']).status === 0;
if (!gcc && process.env.CI) throw new Error('CI must check the exec helper against its source: install gcc');

/** The Docker command server carries its exec helper as bytes (exec-helper.ts): they must be what exec-helper.c builds. */
describe.skipIf(!gcc)('the exec helper', () => {
  const temp = useTempDirs('rg-exec-helper-');

  test('the bytes the server carries are what its source builds', async (ctx) => {
    // Another gcc builds other bytes: only the one the helper was built with can check them.
    const recorded = /exec-helper\.c \(([^)]+)\)/.exec(readFileSync(path.join(REPO, 'harness/sandbox/docker/exec-helper.ts'), 'utf8'))?.[1];
    const here = spawnSync('gcc', ['-dumpfullversion'], { encoding: 'utf8' }).stdout.trim();
    if (here !== recorded) {
      if (process.env.CI) throw new Error(`CI builds the exec helper with gcc ${here}; it was built with ${recorded}`);
      ctx.skip();
    }
    const out = path.join(await temp(), 'exec-helper.ts');
    const built = spawnSync('sh', [path.join(REPO, 'harness/sandbox/docker/exec-helper.sh'), out], { encoding: 'utf8' });
    expect(built.stderr).toBe('');
    expect(built.status).toBe(0);
    const payload = /'([A-Za-z0-9+/=]+)'/.exec(readFileSync(out, 'utf8'))?.[1];
    expect(payload, 'rebuild it: npm run exec-helper').toBe(EXEC_HELPER_BASE64);
    // A static program of one page or so, which starts without a loader.
    expect(Buffer.from(payload!, 'base64').length).toBeLessThan(4096);
  });
});
