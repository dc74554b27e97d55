import { LocalBackend } from '../../harness/sandbox/local.js';
import type { SandboxBackend } from '../../harness/sandbox/types.js';

/**
 * Every backend the conformance suite runs against. A backend whose tool is missing is listed
 * as unavailable with the reason; in CI (CI=true) that is a failure, never a silent skip.
 */
export interface BackendCase {
  name: string;
  make: () => SandboxBackend;
  /** Isolating backends also promise no network and no host filesystem access. */
  isolating: boolean;
}

export function backendCases(): BackendCase[] {
  return [{ name: 'local', make: () => new LocalBackend(), isolating: false }];
}
