/**
 * How big one sandbox may get, whatever the backend: the same fixture must not pass on one
 * backend and run out of memory on another. Each backend enforces what it can, in its own units
 * (cgroups and rlimits for bwrap, the container's HostConfig for Docker); an E2B sandbox's size is
 * its template's.
 */
export interface SandboxLimits {
  /** Memory for everything in the sandbox, in MiB (no swap beyond it where the backend can say so). */
  memoryMb: number;
  /** Processes and threads at once: a fork bomb stops here. */
  pids: number;
  /** Largest file a process may write, in MiB (RLIMIT_FSIZE). */
  fileSizeMb: number;
  /** CPUs (fractions allowed). */
  cpus: number;
  /** Size of a memory-backed /tmp, in MiB (counts against memory). */
  tmpMb: number;
}

export const DEFAULT_LIMITS: SandboxLimits = { memoryMb: 4096, pids: 1024, fileSizeMb: 1024, cpus: 2, tmpMb: 512 };

export const MIB = 1024 * 1024;
