import { bwrapBackend } from './bwrap/descriptor.js';
import { dockerBackend } from './docker/descriptor.js';
import { e2bBackend } from './e2b/descriptor.js';
import { localBackend } from './host/descriptor.js';
import { podmanBackend } from './podman/descriptor.js';
import type { z } from 'zod';
import { RedgreenError } from '../errors.js';
import type { BackendContext, BackendDescriptor, BackendFlag } from './registry.js';

/** Every backend redgreen has. A new backend is a folder with a descriptor, and one line here. */
const BUILT_IN: readonly BackendDescriptor[] = [localBackend, bwrapBackend, dockerBackend, podmanBackend, e2bBackend];

/** The built-in backends, then those registered from user code (registerBackend), in that order. */
export const BACKENDS: readonly BackendDescriptor[] = [...BUILT_IN];

export const backendNames = (): string[] => BACKENDS.map((b) => b.name);

/**
 * Adds a backend from user code (the public API, a config file): `--backend <name>`, `auto` (when
 * it is local and ranked), `doctor` and `gc` see it from then on. Its options are read from the
 * API or the config file (CLI flags are the built-in backends' only). A name is registered once.
 */
export function registerBackend(descriptor: BackendDescriptor): void {
  if (!/^[a-z0-9][a-z0-9_-]*$/.test(descriptor.name) || descriptor.name === 'auto')
    throw new RedgreenError(
      'USAGE',
      `backend name ${JSON.stringify(descriptor.name)}: use lower-case letters, digits, "_" and "-" (not "auto")`,
    );
  const same = BACKENDS.find((b) => b.name === descriptor.name);
  if (same === descriptor) return;
  if (same) throw new RedgreenError('USAGE', `a backend "${descriptor.name}" is already registered`);
  (BACKENDS as BackendDescriptor[]).push(descriptor);
}

/** Backends `redgreen gc` can clean up, and those that run containers from images (`image build`). */
export const GC_BACKENDS = BACKENDS.filter((b) => b.gc).map((b) => b.name);
export const IMAGE_BACKENDS = BACKENDS.filter((b) => b.buildImage).map((b) => b.name);

/** The backend of this name; a usage error listing the others when there is none. */
export function backendNamed(name: string): BackendDescriptor {
  const d = BACKENDS.find((b) => b.name === name);
  if (!d) throw new RedgreenError('USAGE', `unknown backend "${name}"`, `backends: ${BACKENDS.map((b) => b.name).join(', ')}`);
  return d;
}

/** Every backend's CLI flags, once each (backends speaking the same API share theirs). */
export function backendFlags(): BackendFlag[] {
  const byKey = new Map<string, BackendFlag>();
  for (const f of BACKENDS.flatMap((b) => b.flags)) if (!byKey.has(f.key)) byKey.set(f.key, f);
  return [...byKey.values()];
}

/**
 * Every backend's option fields, for the run options schema. They are checked and carried at run
 * time; statically a run knows none of them (each backend parses its own with its schema).
 */
export function backendOptionsShape(): Record<never, z.ZodType> {
  return Object.assign({}, ...BACKENDS.map((b) => b.options.shape)) as Record<never, z.ZodType>;
}

/**
 * `--backend auto`: the most isolating local backend that works here (never a remote service:
 * that costs money and needs credentials). The local backend always works.
 */
export async function pickAuto(options: Record<string, unknown>, ctx: BackendContext): Promise<BackendDescriptor> {
  const ranked = BACKENDS.filter((b) => !b.remote && b.autoRank !== undefined).sort((a, b) => b.autoRank! - a.autoRank!);
  for (const d of ranked) if ((await d.probe(d.options.parse(options), ctx)).ok) return d;
  return backendNamed('local');
}
