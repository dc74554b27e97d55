import { harnessVersion } from '../../../config/paths.js';

/**
 * Where the E2B wire client sends requests, resolved as the official SDK resolves them (its
 * ConnectionConfig), so the same variables reach the same service: E2B_API_KEY, E2B_DOMAIN
 * (default e2b.app), E2B_API_URL (default https://api.<domain>), E2B_SANDBOX_URL (one address for
 * every sandbox's envd) and E2B_DEBUG (a local E2B: localhost:3000 and localhost:49983).
 */
export interface E2BConnection {
  apiKey: string;
  domain: string;
  apiUrl: string;
  sandboxUrl?: string;
  debug: boolean;
  requestTimeoutMs: number;
}

export interface ConnectionInput {
  apiKey?: string;
  domain?: string;
  apiUrl?: string;
  sandboxUrl?: string;
  requestTimeoutMs?: number;
}

const env = (name: string) => process.env[name] || undefined;

/** Null when there is no API key (the caller says what to do). */
export function resolveConnection(o: ConnectionInput): E2BConnection | null {
  const apiKey = o.apiKey ?? env('E2B_API_KEY');
  if (!apiKey) return null;
  const debug = (env('E2B_DEBUG') ?? 'false').toLowerCase() === 'true';
  const domain = o.domain ?? env('E2B_DOMAIN') ?? 'e2b.app';
  const sandboxUrl = o.sandboxUrl ?? env('E2B_SANDBOX_URL');
  return {
    apiKey,
    domain,
    apiUrl: (o.apiUrl ?? env('E2B_API_URL') ?? (debug ? 'http://localhost:3000' : `https://api.${domain}`)).replace(/\/+$/, ''),
    ...(sandboxUrl ? { sandboxUrl: sandboxUrl.replace(/\/+$/, '') } : {}),
    debug,
    requestTimeoutMs: o.requestTimeoutMs ?? 30_000,
  };
}

/** envd's port inside every sandbox; E2B's proxy routes on it and the sandbox id. */
export const ENVD_PORT = 49983;
/** E2B's own domains, whose sandboxes sit behind one proxy host that routes on headers (as the SDK does outside a browser). */
const SHARED_PROXY_DOMAINS = new Set(['e2b.app', 'e2b.dev', 'e2b.pro', 'e2b-staging.dev']);

/** The base URL of one sandbox's envd. */
export function envdUrl(c: E2BConnection, sandboxId: string, sandboxDomain: string | undefined): string {
  if (c.sandboxUrl) return c.sandboxUrl;
  if (c.debug) return `http://localhost:${ENVD_PORT}`;
  const domain = sandboxDomain ?? c.domain;
  if (SHARED_PROXY_DOMAINS.has(domain)) return `https://sandbox.${domain}`;
  return `https://${ENVD_PORT}-${sandboxId}.${domain}`;
}

let userAgent: string | undefined;
export const USER_AGENT = () => (userAgent ??= `redgreen/${harnessVersion()}`);
