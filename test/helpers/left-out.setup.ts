import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CHROMIUM } from '../../harness/bench/browser.js';
import { BACKENDS } from '../../harness/sandbox/backends.js';

/**
 * Outside CI, the suites of an optional tool that is missing here are left out (their tests count
 * as skipped); in CI each is a failure instead (backendCases, toolchain()). This says, once the run
 * is over, which were left out and what runs them, so "42 skipped" is not a riddle to a new user.
 * Registered in the e2e project, which every full run has.
 */
async function leftOut(): Promise<string[]> {
  const lines: string[] = [];
  const ctx = { passEnv: [], cacheDir: path.join(os.homedir(), '.cache', 'redgreen') };
  for (const d of BACKENDS) {
    if (d.remote) continue;
    const probe = await d.probe(d.options.parse({}), ctx);
    if (!probe.ok) lines.push(`${d.name}: ${probe.reason} (${probe.fix})`);
  }
  for (const tool of ['go', 'cargo']) {
    if (spawnSync(tool, ['version'], { stdio: 'ignore' }).status !== 0)
      lines.push(`${tool}: not installed (apt-get install -y ${tool === 'go' ? 'golang-go' : tool})`);
  }
  if (!existsSync(CHROMIUM))
    lines.push(`the HTML report in a browser: no Chromium at ${CHROMIUM} (apt-get install -y chromium, or set CHROMIUM_PATH)`);
  if (!process.env.E2B_API_KEY)
    lines.push('the live E2B service: E2B_API_KEY is not set (the e2b backend is tested against its local test double either way)');
  return lines;
}

export default async function setup(): Promise<(() => void) | undefined> {
  if (process.env.CI) return undefined;
  const lines = await leftOut();
  return () => {
    if (!lines.length) return;
    console.log(
      [
        '',
        'Left out here (their tests count as skipped; `CI=true bash .ci/run` installs and starts everything and runs them all):',
        ...lines.map((l) => `  - ${l}`),
        ...(lines.some((l) => /^(docker|podman):/.test(l))
          ? ['Engines for these tests, as root: eval "$(bash test/helpers/docker-start.sh)", eval "$(bash test/helpers/podman-start.sh)".']
          : []),
        '',
      ].join('\n'),
    );
  };
}
