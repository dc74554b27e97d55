/**
 * How big one sandbox may get, whatever the backend: the same fixture must not pass on one
 * backend and run out of memory on another. Each backend enforces what it can, in its own units
 * (cgroups, rlimits and a size-limited tmpfs for bwrap, the container's HostConfig and tmpfs
 * volumes for Docker); an E2B sandbox's size is its template's.
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
  /**
   * What the sandbox may store, in MiB: the workspace, HOME and the scratch folder (bwrap: together,
   * with /tmp; Docker: each). Memory-backed (tmpfs), so it also counts against memory.
   */
  diskMb: number;
}

export const DEFAULT_LIMITS: SandboxLimits = { memoryMb: 4096, pids: 1024, fileSizeMb: 1024, cpus: 2, tmpMb: 512, diskMb: 2048 };

export const MIB = 1024 * 1024;

/** Which limit a command ran into; the result carries it so a verdict can name it. */
export type LimitKind = 'memory' | 'disk' | 'file-size' | 'pids';

export interface LimitHit {
  kind: LimitKind;
  /** For people: which limit, and its size ("killed: out of memory (limit 1024 MiB)"). */
  message: string;
}

const mib = (bytes: number) => `${Math.round(bytes / MIB)} MiB`;

/** The one wording of each limit, whichever backend noticed it. Sizes in bytes. */
export const limitHit = {
  memory: (bytes: number): LimitHit => ({ kind: 'memory', message: `killed: out of memory (limit ${mib(bytes)})` }),
  disk: (where: string, bytes: number): LimitHit => ({
    kind: 'disk',
    message: `no space left: ${where} is full (size limit ${mib(bytes)})`,
  }),
  fileSize: (bytes: number): LimitHit => ({ kind: 'file-size', message: `killed: a file outgrew the file size limit (${mib(bytes)})` }),
  pids: (n: number): LimitHit => ({ kind: 'pids', message: `could not start a process: the process limit (${n}) was reached` }),
};

/** SIGXFSZ: what RLIMIT_FSIZE sends a process writing past it (its exit is then 128 + 25). */
export const SIGXFSZ_EXIT = 128 + 25;

/** Free space below this counts as full: a write that failed for lack of room leaves less than one more write's worth. */
export const FULL_BELOW_BYTES = 256 * 1024;
