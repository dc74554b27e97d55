import type Docker from 'dockerode';
import { describeError } from '../../errors.js';
import { containerOptions, type ContainerPlan } from './config.js';
import type { LimitCounters } from './limit-probe.js';
import type { CommandServer } from '../core/command-server.js';
import { linkable, openLink, type ServerLink } from './link.js';
import { startContainerServer, type ContainerServer } from './server.js';
import { SERVER_CAPS, serverCmd } from './server-script.js';

/** What every container of one sandbox shares: image, volumes, labels, limits. */
export type SandboxPlan = Omit<ContainerPlan, 'cmd' | 'env' | 'workingDir' | 'name' | 'network' | 'user' | 'stdin' | 'capAdd'>;

/** A started container with its volumes, ready to be handed to a sandbox (again, once reset). */
export interface PreparedContainer {
  /** The sandbox's id and its volumes' name prefix (a replacement container keeps them). */
  name: string;
  /** The image a sandbox asked for (what a reused container is kept for). */
  image: string;
  container: Docker.Container;
  /** Its command server; null when the image lacks what the server needs (commands then go through the Exec API). */
  server: CommandServer | null;
  volume: string;
  plan: SandboxPlan;
  /** The image's PATH. */
  imagePath: string;
  /** Variables that point at files of the host's copied into the container (the CA bundles' volume). */
  env: Record<string, string>;
  /** Its image leaves the sandbox's folders empty: a reset gives the next sandbox what a new container would. */
  resettable: boolean;
  /** Sandboxes it was handed to. */
  uses: number;
  /** Its cgroup's limit counters as last probed (a new container starts at 0). */
  counters: LimitCounters;
}

/** A sandbox container started, its server's (null: a plain sleep) and what became of a link offered. */
export interface StartedContainer {
  container: Docker.Container;
  server: CommandServer | null;
  resettable: boolean;
  link: ContainerServer['link'];
}

/**
 * Creates a sandbox container on the plan's volumes (network none, the command server as its main
 * process), starts it and attaches to its server, offering it a link past the engine (link.ts)
 * where the engine may see this host's files. An engine that cannot mount the link's folder
 * (a remote one behind a local socket) or shows the server another copy of it (a VM between) is
 * not offered one again, nor is an image whose server does not take one (the sh server, a plain
 * sleep). `offer` makes the link (tests offer broken ones). On failure nothing is left of
 * the container; the volumes are the caller's.
 */
export async function startSandboxContainer(
  docker: Docker,
  plan: SandboxPlan,
  name: string,
  offer: () => Promise<ServerLink> = openLink,
): Promise<StartedContainer> {
  // The sh server never opens a link; a host without mkfifo only goes without one.
  const offered = !plan.shellServer && linkable(docker) && !unlinkable.has(docker) && !unlinkedImages(docker).has(plan.image);
  const link = offered ? await offer().catch(() => null) : null;
  try {
    const started = await startWith(docker, plan, name, link);
    if (!link || started.link === 'linked') return started;
    if (started.link === 'unreachable') unlinkable.add(docker);
    else unlinkedImages(docker).add(plan.image);
    if (started.server) return started;
    // A plain sleep (the image lacks the server's tools) is reached through the archive API, which
    // mounts every source again, this link's folder too, gone once the container started: the
    // container is made again without one.
    await started.container.remove({ force: true }).catch(() => undefined);
    return await startWith(docker, plan, name, null);
  } catch (e) {
    if (!link || !describeError(e).includes(link.dir)) throw e;
    unlinkable.add(docker);
    return await startWith(docker, plan, name, null);
  } finally {
    link?.release();
  }
}

/** Engines that could not mount a link's folder, or showed the server another copy of it. */
const unlinkable = new WeakSet<Docker>();
/** Per engine, images whose server does not take a link (the sh server, a plain sleep). */
const noLinkImages = new WeakMap<Docker, Set<string>>();
function unlinkedImages(docker: Docker): Set<string> {
  let set = noLinkImages.get(docker);
  if (!set) noLinkImages.set(docker, (set = new Set()));
  return set;
}

async function startWith(docker: Docker, plan: SandboxPlan, name: string, link: ServerLink | null): Promise<StartedContainer> {
  let container: Docker.Container | undefined;
  try {
    container = await docker.createContainer(
      containerOptions({
        ...plan,
        name,
        network: 'none',
        cmd: serverCmd(plan.shellServer),
        user: '0:0',
        stdin: true,
        capAdd: SERVER_CAPS,
        ...(link ? { link: link.dir } : {}),
      }),
    );
    const started = await startContainerServer(docker, container, link);
    return { container, server: started?.server ?? null, resettable: started?.fresh ?? false, link: started?.link ?? 'ignored' };
  } catch (e) {
    await (container ?? docker.getContainer(name)).remove({ force: true }).catch(() => undefined);
    throw e;
  }
}
