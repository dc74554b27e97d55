import { randomBytes } from 'node:crypto';
import type Docker from 'dockerode';
import { overlayVolume, WORKDIR } from './config.js';
import { startSandboxContainer, type PreparedContainer } from './container.js';
import { overlayOnLayer } from './layers.js';
import type { ExecResult } from '../core/types.js';

/** A container whose workspace is an overlay over a prepared layer, and the layer's size. */
export interface LayeredContainer {
  container: PreparedContainer;
  bytes: number;
}

/**
 * Puts the layer `lower` under the empty workspace of the started container `old`: the overlay's
 * upper folders are made in its `ws` tmpfs (through `run`, as the sandbox user), and a new
 * container on the same volumes starts with the overlay as its workspace while `old` still holds
 * that tmpfs. `old` is the caller's to remove once it has moved on. Null, with the workspace
 * empty again and no overlay left, when the engine cannot mount it (a rootless engine, a layer
 * whose copy never finished).
 */
export async function startOverLayer(
  docker: Docker,
  old: PreparedContainer,
  lower: Docker.VolumeInspectInfo,
  run: (argv: string[]) => Promise<ExecResult>,
): Promise<LayeredContainer | null> {
  if ((await run(['mkdir', `${WORKDIR}/upper`, `${WORKDIR}/work`])).exitCode !== 0) return null;
  try {
    const overlay = await overlayOnLayer(docker, old.volume, lower, old.plan.labels);
    if (overlay) {
      const plan = { ...old.plan, layer: overlay.layer };
      const fresh = await startSandboxContainer(docker, plan, `${old.name}-${randomBytes(3).toString('hex')}`);
      return { container: { ...old, ...fresh, plan, resettable: false, counters: { oomKills: 0, pidsMax: 0 } }, bytes: overlay.bytes };
    }
  } catch {
    // The engine could not mount it: undone below.
  }
  await docker
    .getVolume(overlayVolume(old.volume))
    .remove()
    .catch(() => undefined);
  await run(['rmdir', `${WORKDIR}/upper`, `${WORKDIR}/work`]);
  return null;
}
