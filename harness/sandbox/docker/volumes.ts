import type Docker from 'dockerode';
import { engineFailure } from './client.js';
import { overlayVolume, PLAIN_VOLUME_DRIVER_OPTS, volumeDriverOpts, volumeNames, type DockerLimits } from './config.js';

/**
 * The volumes of a sandbox's containers (workspace, scratch, HOME), each a tmpfs of the disk
 * limit. An engine that refuses a size on a tmpfs volume (Podman before 4.4 takes it for a project
 * quota) gets plain ones: the disk limit is then not enforced there, and `sized` says so.
 */
export class SandboxVolumes {
  /** Whether this engine limits volume size. */
  sized = true;

  constructor(
    private readonly docker: Docker,
    private readonly limits: DockerLimits,
  ) {}

  async create(name: string, labels: Record<string, string>): Promise<void> {
    const create = (sized: boolean) =>
      Promise.all(
        volumeNames(name).map((Name) =>
          this.docker.createVolume({ Name, Labels: labels, DriverOpts: sized ? volumeDriverOpts(this.limits) : PLAIN_VOLUME_DRIVER_OPTS }),
        ),
      );
    if (this.sized) {
      try {
        await create(true);
        return;
      } catch (e) {
        if (!/size.*not supported/i.test(engineFailure('create volume', e, this.docker).message)) throw e;
        this.sized = false;
      }
    }
    await create(false);
  }

  /** Never throws: what cannot be removed now is found by close() or `redgreen gc` through its labels. */
  async remove(name: string, overlaid = false): Promise<void> {
    // The overlay first: the tmpfs its upper folder lies in is busy while it is mounted.
    if (overlaid)
      await this.docker
        .getVolume(overlayVolume(name))
        .remove()
        .catch(() => undefined);
    await Promise.all(
      volumeNames(name).map((v) =>
        this.docker
          .getVolume(v)
          .remove()
          .catch(() => undefined),
      ),
    );
  }
}
