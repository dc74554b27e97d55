import { z } from 'zod';
import { backendNamed, GC_BACKENDS } from '../sandbox/backends.js';

/** Backends that can collect what dead runs left. */

export const GcOptionsSchema = z.object({
  backend: z.enum(GC_BACKENDS as [string, ...string[]]).default('docker'),
  run: z.array(z.string().min(1)).default([]),
  allHosts: z.boolean().default(false),
  dryRun: z.boolean().default(false),
  json: z.boolean().default(false),
});
export type GcOptions = z.infer<typeof GcOptionsSchema>;

/**
 * `redgreen gc`: removes what runs that are no longer alive left on a backend (containers,
 * volumes and build-stage images on an engine, remote sandboxes, host folders). What other hosts
 * made on a shared engine or service is left alone unless --all-hosts. Exit 3 when something
 * could not be removed.
 */
export async function gc(options: GcOptions): Promise<number> {
  const descriptor = backendNamed(options.backend);
  const outcome = await descriptor.gc!(
    { runIds: options.run, allHosts: options.allHosts, dryRun: options.dryRun },
    descriptor.options.parse({}),
  );
  if (options.json) process.stdout.write(`${JSON.stringify(outcome.json, null, 2)}\n`);
  else process.stdout.write(`${[...outcome.lines, outcome.summary].join('\n')}\n`);
  return outcome.failed ? 3 : 0;
}
