import { describeError } from '../../errors.js';
import type { Probe } from '../registry.js';
import { e2bConnection } from './backend.js';
import { isAuthFailure } from './errors.js';
import { listSandboxes } from './wire/api.js';

/**
 * `doctor`'s check of an E2B-compatible service: one list call (no sandbox is created) shows that
 * the API answers at its address and accepts the key. Not retried: doctor says what is wrong now.
 */
export async function checkService(): Promise<Probe> {
  const connection = e2bConnection({ requestTimeoutMs: 10_000 });
  const where = connection.apiUrl;
  try {
    await listSandboxes(connection, {}, { limit: 1 });
    return { ok: true, detail: `${where}: reachable, key accepted` };
  } catch (e) {
    if (isAuthFailure(e))
      return {
        ok: false,
        reason: `${where} refused E2B_API_KEY: ${describeError(e)}`,
        fix: 'check E2B_API_KEY (and that E2B_API_URL / E2B_DOMAIN name the service the key is for)',
      };
    return {
      ok: false,
      reason: `the E2B API at ${where} cannot be reached: ${describeError(e)}`,
      fix: "check E2B_API_URL (or E2B_DOMAIN) and this machine's network; for a private CA set NODE_EXTRA_CA_CERTS=<ca.pem>",
    };
  }
}
