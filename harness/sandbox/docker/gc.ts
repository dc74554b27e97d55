import type Docker from 'dockerode';
import { describeError } from '../../errors.js';
import { keepReason, sweep, type GcOptions, type KeepReason } from '../core/gc.js';
import { labelledLiveness } from '../core/owner.js';
import { engineFailure, statusOf } from './client.js';
import { hasLabels, IMAGE_ROLES, LABEL, labelledVolumes } from './labels.js';
import { orphanLayers } from './layers.js';

/** The shared options, and what only an engine's sweep of one backend session needs. */
export interface EngineGcOptions extends GcOptions {
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
  /** Objects of runs that are still alive, of other hosts, or of runs the options spare. */
  kept: (GcItem & { reason: KeepReason })[];
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
 * A container made by someone else from a redgreen image is not redgreen's, whatever it inherited.
 * With `o.runIds`, objects of other runs are not even listed (a label filter cannot say "one of").
 */
export async function collectGarbage(docker: Docker, o: EngineGcOptions = {}): Promise<GcReport> {
  const filters = [LABEL.run, ...Object.entries(o.match ?? {}).map(([k, v]) => `${k}=${v}`)];
  const report: GcReport = { removed: [], kept: [], failed: [] };
  const sweepOne = async (item: GcItem, labels: Record<string, string> | undefined, remove: () => Promise<unknown>) => {
    const run = labels?.[LABEL.run] ?? '';
    if (o.runIds && !o.runIds.includes(run)) return;
    const keep = o.ignoreLiveness ? null : keepReason(run, () => labelledLiveness(labels), o);
    // Removed meanwhile by its own run: that is what we wanted.
    const r = await sweep(keep, o, remove, (e) => statusOf(e) === 404);
    if ('kept' in r) report.kept.push({ ...item, reason: r.kept });
    else if ('removed' in r) report.removed.push(item);
    else report.failed.push({ ...item, error: describeError(r.failed) });
  };

  let containers: Docker.ContainerInfo[];
  let volumes: Docker.VolumeInspectInfo[];
  let images: Docker.ImageInfo[];
  try {
    containers = await docker.listContainers({ all: true, filters: { label: filters } });
  } catch (e) {
    throw engineFailure('list containers', e);
  }
  // A container that carries only what it inherited from a redgreen image is nobody's leftover.
  const imageRoles: readonly string[] = Object.values(IMAGE_ROLES);
  containers = containers.filter((c) => hasLabels(c.Labels, filters) && !imageRoles.includes(c.Labels?.[LABEL.role] ?? ''));
  await Promise.all(
    containers.map((c) =>
      sweepOne(itemOf('container', c.Names[0]?.replace(/^\//, '') ?? c.Id, c.Labels), c.Labels, () =>
        docker.getContainer(c.Id).remove({ force: true }),
      ),
    ),
  );
  try {
    volumes = await labelledVolumes(docker, filters);
    images = o.match ? [] : await docker.listImages({ filters: { label: [`${LABEL.role}=image-stage`] } });
  } catch (e) {
    throw engineFailure('list volumes and images', e);
  }
  await Promise.all(
    volumes.map((v) =>
      sweepOne(itemOf('volume', v.Name, v.Labels ?? undefined), v.Labels ?? undefined, () => docker.getVolume(v.Name).remove()),
    ),
  );
  // Prepared layers carry no run: they go when the cache they belong to is gone (layers.ts).
  if (!o.match && !o.runIds) {
    for (const v of await orphanLayers(docker).catch(() => [])) {
      const item = { kind: 'volume' as const, name: v.name, run: '-', owner: `cache ${v.cacheDir}` };
      // One a container mounts (a run of another harness on it) stays: the engine refuses.
      const r = await sweep(
        null,
        o,
        () => docker.getVolume(v.name).remove(),
        (e) => statusOf(e) === 404,
      );
      if ('removed' in r) report.removed.push(item);
      else if ('failed' in r) report.failed.push({ ...item, error: describeError(r.failed) });
    }
  }
  for (const img of images) {
    for (const tag of img.RepoTags?.length ? img.RepoTags : [img.Id]) {
      await sweepOne(itemOf('image', tag, img.Labels), img.Labels, () => docker.getImage(tag).remove());
    }
  }
  return report;
}
