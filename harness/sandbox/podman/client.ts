import type Docker from 'dockerode';
import { RedgreenError } from '../../errors.js';
import { engineClient } from '../docker/client.js';

/** Where Podman's Docker-compatible API listens: CONTAINER_HOST (as podman-remote reads it), else the rootful socket. */
export function podmanAddress(): string {
  return process.env.CONTAINER_HOST || 'unix:///run/podman/podman.sock';
}

const HINT =
  'install podman (apt-get install -y podman catatonit) and start its API service as root: `podman system service --time=0 unix:///run/podman/podman.sock &` (or `systemctl start podman.socket`); CONTAINER_HOST names another socket';

/**
 * Podman gives containers RLIMIT_NOFILE and RLIMIT_NPROC of its own, above what a host without
 * CAP_SYS_RESOURCE (a container, a CI sandbox) may grant, and the container then fails to start.
 * These fit under any usual host limit and leave test suites room; processes are capped by the
 * sandbox's pids limit anyway.
 */
const ULIMITS = [
  { Name: 'nofile', Soft: 8192, Hard: 8192 },
  { Name: 'nproc', Soft: 16384, Hard: 16384 },
];

/** A client for Podman's Docker-compatible API on a unix socket. */
export function podmanClient(): Docker {
  const address = podmanAddress();
  if (!address.startsWith('unix://')) {
    throw new RedgreenError(
      'USAGE',
      `CONTAINER_HOST=${address}: the podman backend speaks to a local unix socket only`,
      'forward the remote service to a local socket (ssh -L), or use --backend docker with DOCKER_HOST',
    );
  }
  return engineClient(
    { backend: 'podman', label: 'the Podman service', address, hint: HINT, ulimits: ULIMITS },
    { socketPath: address.slice('unix://'.length) },
  );
}
