import type Docker from 'dockerode';
import { describeError } from '../../errors.js';
import { engineFailure, statusOf } from './client.js';
import { LABEL, ownerLiveness, type Liveness } from './labels.js';

export interface GcOptions {
  /** Also remove objects made from other hosts (a shared remote engine): their owners cannot be checked from here. */
  allHosts?: boolean;
  /** Only list what would be removed. */
  dryRun?: boolean;
  /** Only objects carrying these labels (e.g. one backend session at the end of its run). */
  match?: Record<string, string>;
  /** Remove matching objects even if their owner is alive (a run sweeping its own session). */
  ignoreLiveness?: boolean;
}

export interface GcItem {
  kind: 'container' | 'volume' | 'image';
  name: string;
  run: string;
  owner: string;
}

export interface GcReport {
  removed: GcItem[];
  /** Objects of runs that are still alive, or of other hosts. */
  kept: (GcItem & { reason: Liveness })[];
  failed: (GcItem & { error: string })[];
}

function itemOf(kind: GcItem['kind'], name: string, labels: Record<string, string> | undefined): GcItem {
  const l = labels ?? {};
  return { kind, name, run: l[LABEL.run] ?? '?', owner: `${l[LABEL.host] ?? '?'}:${l[LABEL.pid] ?? '?'}` };
}

/**
 * Removes every container and volume labelled by redgreen whose run is not alive (its process is
 * gone, or its pid now belongs to another process), and build-stage images left by an
 * interrupted `image build`. Containers go first, so the volumes they held can then be removed.
 */
export async function collectGarbage(docker: Docker, o: GcOptions = {}): Promise<GcReport> {
  const filters = [LABEL.run, ...Object.entries(o.match ?? {}).map(([k, v]) => `${k}=${v}`)];
  const report: GcReport = { removed: [], kept: [], failed: [] };
  const doomed = (labels: Record<string, string> | undefined): Liveness | null => {
    if (o.ignoreLiveness) return null;
    const alive = ownerLiveness(labels);
    if (alive === 'dead' || (alive === 'other-host' && o.allHosts)) return null;
    return alive;
  };
  const sweep = async (item: GcItem, labels: Record<string, string> | undefined, remove: () => Promise<unknown>) => {
    const keep = doomed(labels);
    if (keep) return void report.kept.push({ ...item, reason: keep });
    if (o.dryRun) return void report.removed.push(item);
    try {
      await remove();
      report.removed.push(item);
    } catch (e) {
      // Removed meanwhile by its own run: that is what we wanted.
      if (statusOf(e) === 404) report.removed.push(item);
      else report.failed.push({ ...item, error: describeError(e) });
    }
  };

  let containers: Docker.ContainerInfo[];
  let volumes: Docker.VolumeInspectInfo[];
  let images: Docker.ImageInfo[];
  try {
    containers = await docker.listContainers({ all: true, filters: { label: filters } });
  } catch (e) {
    throw engineFailure('list containers', e);
  }
  await Promise.all(
    containers.map((c) => sweep(itemOf('container', c.Names[0]?.replace(/^\//, '') ?? c.Id, c.Labels), c.Labels, () => docker.getContainer(c.Id).remove({ force: true }))),
  );
  try {
    volumes = (await docker.listVolumes({ filters: { label: filters } })).Volumes ?? [];
    images = o.match ? [] : await docker.listImages({ filters: { label: [`${LABEL.role}=image-stage`] } });
  } catch (e) {
    throw engineFailure('list volumes and images', e);
  }
  await Promise.all(volumes.map((v) => sweep(itemOf('volume', v.Name, v.Labels ?? undefined), v.Labels ?? undefined, () => docker.getVolume(v.Name).remove())));
  for (const img of images) {
    for (const tag of img.RepoTags?.length ? img.RepoTags : [img.Id]) {
      await sweep(itemOf('image', tag, img.Labels), img.Labels, () => docker.getImage(tag).remove());
    }
  }
  return report;
}
