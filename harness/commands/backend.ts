import type { ProjectPaths } from '../config/paths.js';
import { backendNamed, pickAuto } from '../sandbox/backends.js';
import type { SandboxBackend } from '../sandbox/core/types.js';
import type { RunOptions } from './options.js';

/** The backend a run asked for, from the registry; `auto` picks the strongest one that works on this machine. */
export async function createBackend(options: RunOptions, paths: ProjectPaths): Promise<SandboxBackend> {
  const ctx = { passEnv: options.passEnv, cacheDir: paths.cacheDir };
  const name = options.backend ?? 'local';
  const descriptor = name === 'auto' ? await pickAuto(options, ctx) : backendNamed(name);
  return descriptor.create(descriptor.options.parse(options), ctx);
}
