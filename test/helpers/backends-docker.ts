import { existsSync } from 'node:fs';
import type { DockerBackendOptions } from '../../harness/sandbox/docker/backend.js';

/**
 * Why the Docker backend cannot run here, or null. Checked without I/O beyond a stat, since case
 * lists are built synchronously: a unix DOCKER_HOST (or the default socket) must exist; a TCP or
 * SSH engine is assumed to be up, and a test fails loudly if it is not. In CI (CI=true) an
 * unavailable engine is a failure, never a skip.
 */
export function dockerUnavailableReason(): string | null {
  const host = process.env.DOCKER_HOST;
  if (host && !host.startsWith('unix://')) return null;
  const socket = host ? host.slice('unix://'.length) : '/var/run/docker.sock';
  return existsSync(socket) ? null : `no Docker engine socket at ${socket} (start one: eval "$(bash test/helpers/docker-start.sh)")`;
}

/** Options for tests: small limits, so many sandboxes fit on a CI machine. */
export function dockerTestOptions(extra: Partial<DockerBackendOptions> = {}): DockerBackendOptions {
  return { runId: 'test', limits: { memoryBytes: 1024 ** 3, cpus: 1, pids: 512 }, ...extra };
}
