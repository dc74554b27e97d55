import { PLAIN_OUTPUT_ENV } from '../core/env.js';

/**
 * The environment a remote command gets on top of the template's own (PATH, HOME and the rest come
 * from the template, as envd sets them): plain-output defaults, the variables a user named with
 * --pass-env, and the sandbox's fixed paths. Nothing else of the harness's process.env leaves this
 * machine — in particular not host paths (PATH, PYENV_ROOT), which mean nothing in the sandbox.
 */
export function remoteEnv(options: {
  host: NodeJS.ProcessEnv;
  passEnv?: readonly string[];
  fixed: Record<string, string>;
}): Record<string, string> {
  const env: Record<string, string> = { ...PLAIN_OUTPUT_ENV };
  for (const name of options.passEnv ?? []) {
    const v = options.host[name];
    if (v !== undefined) env[name] = v;
  }
  return { ...env, ...options.fixed };
}
