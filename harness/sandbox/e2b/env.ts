/**
 * The environment a remote command gets on top of the template's own (PATH, HOME and the rest come
 * from the template, as envd sets them): plain-output defaults, the variables a user named with
 * --pass-env, and the sandbox's fixed paths. Nothing else of the harness's process.env leaves this
 * machine — in particular not host paths (PATH, PYENV_ROOT), which mean nothing in the sandbox.
 */
const REMOTE_DEFAULTS: Readonly<Record<string, string>> = {
  LANG: 'C.UTF-8',
  NO_COLOR: '1',
  FORCE_COLOR: '0',
  PYTHONDONTWRITEBYTECODE: '1',
  PYTHONIOENCODING: 'utf-8',
};

export function remoteEnv(options: {
  host: NodeJS.ProcessEnv;
  passEnv?: readonly string[];
  fixed: Record<string, string>;
}): Record<string, string> {
  const env: Record<string, string> = { ...REMOTE_DEFAULTS };
  for (const name of options.passEnv ?? []) {
    const v = options.host[name];
    if (v !== undefined) env[name] = v;
  }
  return { ...env, ...options.fixed };
}
