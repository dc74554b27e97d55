import { spawnSync } from 'node:child_process';
import { BwrapBackend } from '../../harness/sandbox/bwrap/backend.js';
import { LocalBackend } from '../../harness/sandbox/host/local.js';
import { dockerBackendCase, dockerUnavailableReason } from './backends-docker.js';
import { e2bBackendCase } from './backends-e2b.js';
import type { SandboxBackend } from '../../harness/sandbox/core/types.js';

/**
 * Every backend the conformance suite runs against. A backend whose tool is missing is left out
 * locally; in CI (CI=true) a missing tool is an error, never a silent skip.
 */
export interface BackendCase {
  name: string;
  make: () => SandboxBackend;
  /** Isolating backends also promise no network and no host filesystem access. */
  isolating: boolean;
}

function available(name: string, probe: string[]): boolean {
  const ok = spawnSync(probe[0]!, probe.slice(1), { stdio: 'ignore' }).status === 0;
  if (!ok && process.env.CI) throw new Error(`CI must run the ${name} backend's tests, but \`${probe.join(' ')}\` fails: install it in .ci/run`);
  return ok;
}

export function backendCases(): BackendCase[] {
  const cases: BackendCase[] = [{ name: 'local', make: () => new LocalBackend(), isolating: false }];
  if (available('bwrap', ['bwrap', '--unshare-all', '--ro-bind', '/', '/', 'true'])) {
    cases.push({ name: 'bwrap', make: () => new BwrapBackend(), isolating: true });
  }
  const noDocker = dockerUnavailableReason();
  if (noDocker && process.env.CI) throw new Error(`CI must run the docker backend's tests, but ${noDocker}: .ci/run starts the engine`);
  if (!noDocker) cases.push(dockerBackendCase());
  // The e2b backend runs against the local test double of the service (it needs only Node).
  cases.push(e2bBackendCase());
  return cases;
}
