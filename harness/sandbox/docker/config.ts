import type Docker from 'dockerode';
import { MIB, type SandboxLimits } from '../core/limits.js';

/**
 * Where things are inside a Docker sandbox — the same paths as the bubblewrap backend's, so
 * outputs and transcripts read the same. The workspace, the scratch folder and HOME are volumes
 * of their own: the archive API can write into volumes (not into tmpfs mounts), and a setup
 * container that opted into network mounts the same ones. Each volume is a size-limited tmpfs
 * (the local driver's only size limit that works on every engine and filesystem), so a sandbox
 * cannot fill the engine's disk. /tmp is a tmpfs; the root is read-only.
 */
export const WORKDIR = '/workspace';
export const SCRATCH_DIR = '/redgreen';
export const HOME_DIR = '/home/sandbox';
/** Mount point → volume-name suffix. */
export const VOLUME_MOUNTS = [
  [WORKDIR, 'ws'],
  [SCRATCH_DIR, 'scratch'],
  [HOME_DIR, 'home'],
] as const;

/** Images whose /workspace, /redgreen and /home/sandbox exist and belong to the sandbox user carry this label. */
export const LAYOUT_LABEL = 'redgreen.layout';
export const LAYOUT_VERSION = '1';

/** Commands run as this unprivileged uid:gid, whatever the image's USER; uploads are owned by it. */
export const SANDBOX_UID = 1000;
export const SANDBOX_GID = 1000;
export const SANDBOX_USER = `${SANDBOX_UID}:${SANDBOX_GID}`;

export interface DockerLimits {
  /** Memory (and memory+swap: no swap) per container, in bytes. */
  memoryBytes: number;
  /** CPUs per container (fractions allowed). */
  cpus: number;
  /** Processes and threads per container: a fork bomb stops here. */
  pids: number;
  /** Size of the /tmp tmpfs, in bytes (counts against memory). */
  tmpBytes: number;
  /** Size of each volume (workspace, scratch, HOME), in bytes (tmpfs: counts against memory). */
  diskBytes: number;
  /** Largest file a process may write, in bytes (RLIMIT_FSIZE). */
  fileSizeBytes: number;
}

/** The shared limits (core/limits.ts) in the units the Engine API takes. */
export function dockerLimits(l: SandboxLimits): DockerLimits {
  return {
    memoryBytes: l.memoryMb * MIB,
    cpus: l.cpus,
    pids: l.pids,
    tmpBytes: l.tmpMb * MIB,
    diskBytes: l.diskMb * MIB,
    fileSizeBytes: l.fileSizeMb * MIB,
  };
}

/**
 * A sandbox volume's driver options: a tmpfs of the disk limit, owned by the sandbox user (the
 * engine does not copy an image folder's owner into a volume mounted with options). Its content
 * lives while a container mounts it: a replacement container is started before the old one goes.
 */
export function volumeDriverOpts(l: DockerLimits): Record<string, string> {
  return { type: 'tmpfs', device: 'tmpfs', o: `size=${l.diskBytes},uid=${SANDBOX_UID},gid=${SANDBOX_GID},mode=0755` };
}

/**
 * The same on an engine that refuses a size (volumes.ts): a plain folder, still the sandbox user's
 * wherever it is mounted (a holder's, upper-holders.ts, is mounted where the image has no folder).
 */
export const PLAIN_VOLUME_DRIVER_OPTS: Record<string, string> = { o: `uid=${SANDBOX_UID},gid=${SANDBOX_GID}` };

export interface ContainerPlan {
  name: string;
  image: string;
  /** The sandbox's volumes' common name prefix (see VOLUME_MOUNTS). */
  volume: string;
  labels: Record<string, string>;
  limits: DockerLimits;
  /** 'none' for sandboxes; a setup container that opted into network gets a real one. */
  network: string;
  cmd: string[];
  /**
   * Who the main process runs as. A sandbox's server runs as root (with no capability but those it
   * needs to start commands as SANDBOX_USER) so that commands cannot kill, trace or read it.
   */
  user: string;
  env?: string[];
  workingDir?: string;
  /** The main process reads requests on stdin (the command server), attached once by the harness. */
  stdin?: boolean;
  /** Capabilities the main process keeps (the server's SETUID/SETGID; what it starts runs without any). */
  capAdd?: string[];
  /** rlimits the engine must be told (see EngineProfile.ulimits). */
  ulimits?: { Name: string; Soft: number; Hard: number }[];
  /** The workspace is an overlay over this prepared layer's volume (docker/layers.ts), not the `ws` volume. */
  layer?: string;
  /** Mounts instead of the sandbox's volumes (the layer copy: layers.ts). */
  mounts?: Docker.MountConfig;
  /** A sandbox's command server stays the POSIX sh one, even where python3 could run it (server-script.ts). */
  shellServer?: boolean;
  /** The volume of the host's CA bundles (ca.ts), mounted read-only at CA_MOUNT. */
  ca?: string;
  /** A host folder of FIFOs to the harness (link.ts), mounted read-only at LINK_MOUNT. */
  link?: string;
}

export function volumeNames(prefix: string): string[] {
  return VOLUME_MOUNTS.map(([, suffix]) => `${prefix}-${suffix}`);
}

/** The overlay volume of a sandbox started from a prepared layer. */
export function overlayVolume(prefix: string): string {
  return `${prefix}-ov`;
}

/**
 * One container's configuration: no capabilities, no privilege escalation, a read-only root,
 * limits on memory, CPU and processes, an init (tini) as pid 1 so orphans are reaped, and no
 * logs kept by the engine (output is attached to, and recorded by the transcript instead).
 * The image's entrypoint is replaced by the command's first word: it must not wrap our commands.
 * Empty volumes are filled from the image's folders on first mount, their owner included: that is
 * how they come to belong to the sandbox user without any privilege at run time.
 */
export function containerOptions(p: ContainerPlan): Docker.ContainerCreateOptions {
  return {
    name: p.name,
    Image: p.image,
    Entrypoint: p.cmd.slice(0, 1),
    Cmd: p.cmd.slice(1),
    User: p.user,
    // A host-network container has the host's name; the engine refuses to set another.
    ...(p.network === 'host' ? {} : { Hostname: 'sandbox' }),
    Labels: p.labels,
    ...(p.env ? { Env: p.env } : {}),
    WorkingDir: p.workingDir ?? WORKDIR,
    AttachStdin: p.stdin ?? false,
    AttachStdout: true,
    AttachStderr: true,
    Tty: false,
    OpenStdin: p.stdin ?? false,
    // The container's input ends with the harness's connection: its server then exits.
    StdinOnce: p.stdin ?? false,
    HostConfig: {
      Init: true,
      NetworkMode: p.network,
      ReadonlyRootfs: true,
      CapDrop: ['ALL'],
      ...(p.capAdd ? { CapAdd: p.capAdd } : {}),
      SecurityOpt: ['no-new-privileges'],
      IpcMode: 'private',
      Memory: p.limits.memoryBytes,
      MemorySwap: p.limits.memoryBytes,
      NanoCpus: Math.round(p.limits.cpus * 1e9),
      PidsLimit: p.limits.pids,
      Ulimits: [...(p.ulimits ?? []), { Name: 'fsize', Soft: p.limits.fileSizeBytes, Hard: p.limits.fileSizeBytes }],
      Tmpfs: { '/tmp': `rw,nosuid,nodev,size=${p.limits.tmpBytes},mode=1777` },
      Mounts: volumeMounts(p),
      LogConfig: { Type: 'none', Config: {} },
      AutoRemove: false,
    },
  };
}

/**
 * The sandbox's volumes by mount point. Over a prepared layer, the workspace is the overlay volume
 * (`ov`), whose upper folder lies in the `ws` tmpfs (so the disk limit still holds); both that
 * tmpfs and the layer are mounted too, read-only and out of the way: while a container mounts
 * them the engine keeps the tmpfs up and refuses to remove the layer under the overlay.
 */
function volumeMounts(p: ContainerPlan): Docker.MountConfig {
  if (p.mounts) return p.mounts;
  return [
    ...sandboxMounts(p),
    ...(p.ca ? [mount(p.ca, CA_MOUNT, true)] : []),
    ...(p.link ? [{ Type: 'bind' as const, Source: p.link, Target: LINK_MOUNT, ReadOnly: true }] : []),
  ];
}

function sandboxMounts(p: ContainerPlan): Docker.MountConfig {
  if (!p.layer) return VOLUME_MOUNTS.map(([target, suffix]) => mount(`${p.volume}-${suffix}`, target));
  return [
    mount(overlayVolume(p.volume), WORKDIR),
    mount(`${p.volume}-scratch`, SCRATCH_DIR),
    mount(`${p.volume}-home`, HOME_DIR),
    mount(`${p.volume}-ws`, LAYER_UPPER_MOUNT, true),
    mount(p.layer, LAYER_MOUNT, true),
  ];
}

export function mount(Source: string, Target: string, ReadOnly = false): Docker.MountSettings {
  return { Type: 'volume', Source, Target, ReadOnly };
}

/** Where a layered sandbox's container mounts its overlay's tmpfs and its layer (read-only, never used by commands). */
export const LAYER_UPPER_MOUNT = '/redgreen-upper';
export const LAYER_MOUNT = '/redgreen-layer';
/** Where every sandbox container mounts the host's CA bundles (ca.ts), read-only. */
export const CA_MOUNT = '/redgreen-ca';
/** Where a sandbox container's command server finds the FIFOs to the harness (link.ts), when offered. */
export const LINK_MOUNT = '/redgreen-link';

/** A name Docker accepts for a container or volume, recognisably redgreen's. */
export function objectName(kind: string, fixtureId: string, suffix: string): string {
  const safe = fixtureId.replace(/[^A-Za-z0-9_.-]/g, '_').slice(0, 40);
  return `redgreen-${kind}-${safe}-${suffix}`.replace(/-+/g, '-');
}
