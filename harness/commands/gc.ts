import { z } from 'zod';
import { dockerClient, engineAddress, pingEngine } from '../sandbox/docker/client.js';
import { collectGarbage, type GcItem } from '../sandbox/docker/gc.js';
import { e2bConnection } from '../sandbox/e2b/backend.js';
import { gcSandboxes } from '../sandbox/e2b/gc.js';
import { gcHostSandboxes } from '../sandbox/host/gc.js';
import { RedgreenError } from '../errors.js';

export const GcOptionsSchema = z.object({
  backend: z.enum(['docker', 'e2b', 'local']).default('docker'),
  run: z.array(z.string().min(1)).default([]),
  allHosts: z.boolean().default(false),
  dryRun: z.boolean().default(false),
  json: z.boolean().default(false),
});
export type GcOptions = z.infer<typeof GcOptionsSchema>;

const line = (i: GcItem) => `${i.kind} ${i.name} (run ${i.run}, owner ${i.owner})`;

/**
 * `redgreen gc`: removes the Docker containers, volumes and build-stage images labelled by
 * redgreen whose run is no longer alive. Runs of other hosts on a shared engine are left alone
 * unless --all-hosts. Exit 3 when something could not be removed.
 */
export async function gc(options: GcOptions): Promise<number> {
  if (options.backend === 'e2b') return gcE2B(options);
  if (options.backend === 'local') return gcLocal(options);
  const docker = dockerClient();
  await pingEngine(docker);
  const r = await collectGarbage(docker, { allHosts: options.allHosts, dryRun: options.dryRun });
  if (options.json) {
    process.stdout.write(`${JSON.stringify({ engine: engineAddress(), dryRun: options.dryRun, ...r }, null, 2)}\n`);
  } else {
    const verb = options.dryRun ? 'would remove' : 'removed';
    for (const i of r.removed) process.stdout.write(`${verb} ${line(i)}\n`);
    for (const i of r.failed) process.stdout.write(`failed to remove ${line(i)}: ${i.error}\n`);
    const alive = r.kept.filter((k) => k.reason === 'alive').length;
    const foreign = r.kept.length - alive;
    process.stdout.write(
      `${verb} ${r.removed.length} object(s); kept ${alive} of live runs${foreign ? `, ${foreign} of other hosts (--all-hosts removes those)` : ''}${r.failed.length ? `; ${r.failed.length} failed` : ''}\n`,
    );
  }
  return r.failed.length ? 3 : 0;
}

async function gcE2B(o: GcOptions): Promise<number> {
  const r = await gcSandboxes({ connection: e2bConnection({}), allHosts: o.allHosts, dryRun: o.dryRun, ...(o.run.length ? { runIds: o.run } : {}) });
  if (o.json) process.stdout.write(`${JSON.stringify({ backend: 'e2b', dryRun: o.dryRun, ...r }, null, 2)}\n`);
  else {
    const verb = o.dryRun ? 'would kill' : 'killed';
    for (const id of r.killed) process.stdout.write(`${verb} sandbox ${id}\n`);
    for (const k of r.kept) process.stdout.write(`kept sandbox ${k.id} (run ${k.run}): ${k.why}\n`);
    for (const f of r.failed) process.stdout.write(`failed to kill sandbox ${f.id}: ${f.error}\n`);
    process.stdout.write(`${verb} ${r.killed.length} of ${r.listed} redgreen sandbox(es)${r.failed.length ? `; ${r.failed.length} failed` : ''}\n`);
  }
  return r.failed.length ? 3 : 0;
}

/** Host sandboxes (local, bwrap) whose harness died: what every run also does at its start. */
async function gcLocal(o: GcOptions): Promise<number> {
  if (o.dryRun) throw new RedgreenError('USAGE', '--dry-run is not supported with --backend local');
  const removed = await gcHostSandboxes();
  if (o.json) process.stdout.write(`${JSON.stringify({ backend: 'local', removed }, null, 2)}\n`);
  else process.stdout.write(`${removed.map((r) => `removed ${r}\n`).join('')}removed ${removed.length} host sandbox folder(s)\n`);
  return 0;
}
