import { existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** The proxy variables, in both spellings: what reaches the network here reaches it there too. */
export const PROXY_VARS: readonly string[] = ['http_proxy', 'https_proxy', 'no_proxy', 'HTTP_PROXY', 'HTTPS_PROXY', 'NO_PROXY'];

/**
 * The environment a sandboxed command sees is built from an allowlist, never from the
 * harness's own process.env: tokens and keys in the harness's environment stay out.
 * Only what runtimes need to start (PATH, locale, version-manager roots, CA bundles, proxies)
 * passes through, plus names a user asks for explicitly.
 */
export const HOST_ENV_ALLOWLIST: readonly string[] = [
  'PATH',
  'LANG',
  'LC_ALL',
  'LC_CTYPE',
  'TZ',
  'PYENV_ROOT',
  'PYENV_VERSION',
  'RUSTUP_HOME',
  'RUSTUP_TOOLCHAIN',
  'NODE_EXTRA_CA_CERTS',
  'SSL_CERT_FILE',
  'SSL_CERT_DIR',
  'REQUESTS_CA_BUNDLE',
  'PIP_CERT',
  ...PROXY_VARS,
];

/** Variables that keep runner output plain and stable for parsing, on every backend (remote ones too). */
export const PLAIN_OUTPUT_ENV: Readonly<Record<string, string>> = {
  LANG: 'C.UTF-8',
  NO_COLOR: '1',
  FORCE_COLOR: '0',
  PYTHONDONTWRITEBYTECODE: '1',
  PYTHONIOENCODING: 'utf-8',
};

/** The host's ~/.rustup, when there is one: looked for once, not for every sandbox. */
let hostRustup: string | null | undefined;

export function sandboxEnv(options: {
  host: NodeJS.ProcessEnv;
  passEnv?: readonly string[];
  fixed: Record<string, string>;
  extra?: Record<string, string>;
}): Record<string, string> {
  const env: Record<string, string> = { ...PLAIN_OUTPUT_ENV };
  for (const name of [...HOST_ENV_ALLOWLIST, ...(options.passEnv ?? [])]) {
    const v = options.host[name];
    if (v !== undefined) env[name] = v;
  }
  if (!env.PATH) env.PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';
  // rustup's proxies (cargo, rustc) find their toolchains under $HOME/.rustup by default; the
  // sandbox's HOME is private, so point them at the host's (read-only use).
  if (hostRustup === undefined) {
    const dir = path.join(os.homedir(), '.rustup');
    hostRustup = existsSync(dir) ? dir : null;
  }
  if (!env.RUSTUP_HOME && hostRustup) env.RUSTUP_HOME = hostRustup;
  return { ...env, ...options.extra, ...options.fixed };
}
