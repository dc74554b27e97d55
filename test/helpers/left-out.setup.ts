import { existsSync } from 'node:fs';
import { CHROMIUM } from '../../harness/bench/browser.js';
import { BACKENDS } from '../../harness/sandbox/backends.js';
import { TEST_BACKEND_CONTEXT } from './backends.js';
import { hasToolchain } from './toolchains.js';

/**
 * Outside CI, the suites of an optional tool that is missing here are left out (their tests count
 * as skipped); in CI each is a failure instead (backendCases, toolchain()). This says, once the run
 * is over, which were left out and what runs them, so "42 skipped" is not a riddle to a new user.
 * Registered in the e2e project, which every full run has.
 */
async function leftOut(): Promise<string[]> {
  const lines: string[] = [];
  for (const d of BACKENDS) {
    if (d.remote) continue;
    const probe = await d.probe(d.options.parse({}), TEST_BACKEND_CONTEXT);
    if (!probe.ok) lines.push(`${d.name}: ${probe.reason} (${probe.fix})`);
  }
  for (const tool of ['go', 'cargo']) {
    if (!hasToolchain(tool)) lines.push(`${tool}: not installed (apt-get install -y ${tool === 'go' ? 'golang-go' : tool})`);
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
