import { HOME_DIR, SCRATCH_DIR, WORKDIR } from './config.js';
import type { PreparedContainer } from './container.js';
import { sandboxEnv } from '../core/env.js';
import { MARKER_VAR } from '../core/kill-script.js';

/** Host variables that mean the same inside a container; paths (PATH, CA bundles, PYENV_ROOT) do not. */
const CONTAINER_HOST_VARS = ['TZ', 'http_proxy', 'https_proxy', 'no_proxy', 'HTTP_PROXY', 'HTTPS_PROXY', 'NO_PROXY'];

/** A sandbox's allowlisted environment, with the image's PATH and copies of the host's CA bundles: host paths mean nothing in the container. */
export function containerEnv(p: PreparedContainer, passEnv: readonly string[]): Record<string, string> {
  const host: NodeJS.ProcessEnv = {};
  for (const k of [...CONTAINER_HOST_VARS, ...passEnv]) if (process.env[k] !== undefined) host[k] = process.env[k];
  return sandboxEnv({
    host,
    passEnv,
    extra: p.env,
    fixed: {
      PATH: p.imagePath,
      HOME: HOME_DIR,
      TMPDIR: '/tmp',
      [MARKER_VAR]: p.name,
      REDGREEN_WORKSPACE: WORKDIR,
      REDGREEN_SCRATCH: SCRATCH_DIR,
    },
  });
}
