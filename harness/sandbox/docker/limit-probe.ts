import { HOME_DIR, SCRATCH_DIR, WORKDIR, type DockerLimits } from './config.js';
import type { RunInside } from './paths.js';
import { FULL_BELOW_BYTES, limitHit, SIGXFSZ_EXIT, type LimitHit } from '../core/limits.js';
import type { ExecResult } from '../core/types.js';
import type { LimitCounters, LimitReading } from '../core/command-server.js';

export type { LimitCounters, LimitReading } from '../core/command-server.js';

// cgroup v2 (the container's own cgroup namespace) first, then v1's per-controller mounts.
export const MEMORY_FILES = ['/sys/fs/cgroup/memory.events', '/sys/fs/cgroup/memory/memory.oom_control'];
export const PIDS_FILES = ['/sys/fs/cgroup/pids.events', '/sys/fs/cgroup/pids/pids.events'];
export const MOUNTS: [string, string][] = [
  [WORKDIR, `the workspace (${WORKDIR})`],
  [HOME_DIR, `HOME (${HOME_DIR})`],
  [SCRATCH_DIR, `the scratch folder (${SCRATCH_DIR})`],
  ['/tmp', '/tmp'],
];

/** The counters and what is left on each volume and /tmp: plain sh, cat and df (coreutils or busybox), so any image runs it. */
const PROBE = `for f in ${[...MEMORY_FILES, ...PIDS_FILES].join(' ')}; do [ -r "$f" ] && { echo "== $f"; cat "$f"; }; done
echo "== df"; df -Pk ${MOUNTS.map(([m]) => m).join(' ')} 2>/dev/null; true`;

/** The probe's output, one section per file it read. */
function sections(out: string): Map<string, string> {
  const map = new Map<string, string>();
  for (const part of out.split(/^== /m).slice(1)) {
    const nl = part.indexOf('\n');
    map.set(part.slice(0, nl), part.slice(nl + 1));
  }
  return map;
}

/** `key N` from the first of these files present (v2, then v1). */
function counter(s: Map<string, string>, files: string[], key: string): number {
  const text = files.map((f) => s.get(f)).find((t) => t !== undefined) ?? '';
  const m = new RegExp(`^${key} (\\d+)$`, 'm').exec(text);
  return m ? Number(m[1]) : 0;
}

/** The mount of a `df -Pk` line whose free space is below FULL_BELOW_BYTES. */
function fullMount(df: string): string | undefined {
  return df
    .split('\n')
    .map((line) => line.trim().split(/\s+/))
    .find((f) => f.length >= 6 && /^\d+$/.test(f[3]!) && Number(f[3]) * 1024 < FULL_BELOW_BYTES)?.[5];
}

/**
 * Which limit a failed command ran into: an OOM kill or a fork refused at the pids limit since
 * `before`, a file past RLIMIT_FSIZE (the command died of SIGXFSZ), or a volume or /tmp left full.
 */
export function judgeLimits(limits: DockerLimits, before: LimitCounters, now: LimitReading, r: ExecResult): LimitHit | null {
  const full = MOUNTS.find(([m]) => m === now.fullMount);
  if (now.counters.oomKills > before.oomKills) return limitHit.memory(limits.memoryBytes);
  if (r.exitCode === SIGXFSZ_EXIT) return limitHit.fileSize(limits.fileSizeBytes);
  if (full) return limitHit.disk(full[1], full[0] === '/tmp' ? limits.tmpBytes : limits.diskBytes);
  if (now.counters.pidsMax > before.pidsMax) return limitHit.pids(limits.pids);
  return null;
}

/**
 * What the container says after a failed command, asked with one short exec (a container whose
 * commands go through the Exec API; the command server tells it in its frames). Null when the
 * probe itself cannot run: the result then says nothing more than before.
 */
export async function probeLimits(run: RunInside): Promise<LimitReading | null> {
  const probe = await run(['/bin/sh', '-c', PROBE]).catch(() => null);
  if (!probe || probe.exitCode !== 0) return null;
  const s = sections(probe.stdout);
  return {
    counters: { oomKills: counter(s, MEMORY_FILES, 'oom_kill'), pidsMax: counter(s, PIDS_FILES, 'max') },
    fullMount: fullMount(s.get('df') ?? '') ?? null,
  };
}
