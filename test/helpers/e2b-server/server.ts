/**
 * TEST DOUBLE of E2B (see README.md) — a fake of the cloud service, never of redgreen's code.
 * Two loopback HTTP servers, as in E2B's topology: the control-plane API (`apiUrl`, what
 * E2B_API_URL points at) and the sandbox proxy in front of every sandbox's envd (`sandboxUrl`,
 * E2B_SANDBOX_URL). Point the real `e2b` SDK at both and it drives this double unmodified.
 */
import { rmSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import { controlPlaneHandler } from './control-plane.js';
import { envdHandler } from './envd.js';
import type { Faults } from './faults.js';
import { Registry } from './state.js';

export type { Faults } from './faults.js';

export interface E2BDoubleOptions {
  /** Accept only this API key (default: any non-empty key). */
  apiKey?: string;
  /** The envd version sandboxes report (default 0.5.7: octet-stream uploads, a default user). */
  envdVersion?: string;
  /** Users that exist in every sandbox (default `user` and `root`). */
  users?: readonly string[];
}

export interface E2BDouble {
  apiUrl: string;
  sandboxUrl: string;
  /** Faults the next requests see; assign or mutate at any time. */
  faults: Faults;
  registry: Registry;
  /** Ids of the sandboxes alive now. */
  alive(): string[];
  /** Resolves once every control-plane request received so far is answered (slow creations included). */
  apiSettled(): Promise<void>;
  close(): Promise<void>;
}

function listen(
  handler: (req: http.IncomingMessage, res: http.ServerResponse) => Promise<void>,
  inflight?: Set<Promise<void>>,
): Promise<http.Server> {
  const server = http.createServer((req, res) => {
    const p: Promise<void> = handler(req, res)
      .catch((e: unknown) => {
        if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ code: 500, message: e instanceof Error ? e.message : String(e) }));
      })
      .finally(() => inflight?.delete(p));
    inflight?.add(p);
  });
  // Long test commands keep a stream open with no traffic but keep-alive pings.
  server.requestTimeout = 0;
  server.keepAliveTimeout = 60_000;
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

export async function startE2BDouble(options: E2BDoubleOptions = {}): Promise<E2BDouble> {
  const registry = new Registry({
    baseDir: os.tmpdir(),
    envdVersion: options.envdVersion ?? '0.5.7',
    users: options.users ?? ['user', 'root'],
  });
  // A test process that exits with sandboxes still alive leaves no sandbox folders behind.
  process.once('exit', () => {
    for (const sb of registry.alive()) rmSync(sb.dir, { recursive: true, force: true });
  });
  const double: E2BDouble = {
    apiUrl: '',
    sandboxUrl: '',
    faults: {},
    registry,
    alive: () => registry.alive().map((s) => s.id),
    apiSettled: async () => void (await Promise.allSettled([...apiInflight])),
    close: async () => undefined,
  };
  const apiInflight = new Set<Promise<void>>();
  const api = await listen(
    controlPlaneHandler(registry, () => double.faults, options.apiKey),
    apiInflight,
  );
  const envd = await listen(envdHandler(registry, () => double.faults));
  // Tests start one double per file; it must not keep a worker alive on its own.
  api.unref();
  envd.unref();
  double.apiUrl = `http://127.0.0.1:${(api.address() as AddressInfo).port}`;
  double.sandboxUrl = `http://127.0.0.1:${(envd.address() as AddressInfo).port}`;
  double.close = async () => {
    await registry.killAll('double closed');
    await Promise.all(
      [api, envd].map(
        (s) =>
          new Promise<void>((resolve) => {
            s.close(() => resolve());
            s.closeAllConnections();
          }),
      ),
    );
  };
  return double;
}
