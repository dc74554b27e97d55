import type Docker from 'dockerode';
import { OWNER_LABEL } from '../core/owner.js';

/**
 * Labels on everything the Docker backend creates (containers, volumes, build images). The run
 * says what a thing belongs to; the owner labels (core/owner.ts: host, pid and the pid's start
 * time) say whether its owner is still alive, which is all `redgreen gc` needs.
 */
export const LABEL = {
  run: 'redgreen.run',
  /** sandbox | pool | holder | network | ca | image-build | image-stage */
  role: 'redgreen.role',
  fixture: 'redgreen.fixture',
  /** One backend instance: what its close() sweeps. */
  session: 'redgreen.session',
  /** host, pid, pid-start: who made it. */
  ...OWNER_LABEL,
} as const;

export type Role = 'sandbox' | 'pool' | 'holder' | 'network' | 'ca' | 'image-build' | 'image-stage';

/**
 * The roles of the images redgreen commits (`image build`, the layout images). A container only
 * inherits them, with the labels of the run that built the image: one that says no more is someone's
 * own (`docker run redgreen/runtime:trixie`), never a leftover of a run.
 */
export const IMAGE_ROLES = { runtime: 'runtime-image', layout: 'layout-image' } as const;

// Owners are core's (shared with e2b and the host backends); still importable from here, as before.
export { currentOwner, ownerLabels } from '../core/owner.js';

/**
 * Whether `labels` carry every filter (`key` or `key=value`), as Docker's label filter means it.
 * Checked again on what an engine lists: Podman (4.3 to 5.8 at least) joins the label filters of
 * a volume listing with OR, so a sweep of one session would otherwise remove every run's volumes.
 */
export function hasLabels(labels: Record<string, string> | null | undefined, filters: readonly string[]): boolean {
  return filters.every((f) => {
    const eq = f.indexOf('=');
    const key = eq < 0 ? f : f.slice(0, eq);
    return labels?.[key] !== undefined && (eq < 0 || labels[key] === f.slice(eq + 1));
  });
}

/** The volumes carrying every label filter, whatever the engine's listing joins them with. */
export async function labelledVolumes(docker: Docker, filters: string[]): Promise<Docker.VolumeInspectInfo[]> {
  const volumes = (await docker.listVolumes({ filters: { label: filters } })).Volumes ?? [];
  return volumes.filter((v) => hasLabels(v.Labels, filters));
}
