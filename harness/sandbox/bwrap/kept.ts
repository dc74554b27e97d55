import type { SandboxCgroup } from '../host/cgroup.js';
import type { BwrapServer } from './server.js';

/**
 * A bwrap server outliving its sandbox. Its namespaces and mounts cost a small fixture's time
 * several times over, so a destroyed sandbox's server, with its cgroup, is kept with the folder it
 * serves, for the sandbox that takes that folder next: only when nothing of the first is left in
 * it. Processes are gone after every command (server.ts); the folders bound in are emptied as for
 * any sandbox (host/roots.ts); the namespace's own root and /dev are read-only (args.ts); what is
 * left is cleaned and checked here: System V IPC objects, POSIX shared memory and message queues.
 */
export interface Kept {
  server: BwrapServer;
  cgroup: SandboxCgroup | null;
}

/**
 * Removes IPC objects, shared memory and message queues, and fails when any is left. Looked at
 * with the shell alone: nothing is started when there is nothing, the common case.
 */
const CLEAN_NAMESPACE = `left() {
  for f in /proc/sysvipc/shm /proc/sysvipc/msg /proc/sysvipc/sem; do
    { read -r _ && read -r _ && return 0; } <"$f" 2>/dev/null
  done
  for d in /dev/shm /dev/mqueue; do
    for f in "$d"/* "$d"/.[!.]* "$d"/..?*; do [ -e "$f" ] || [ -L "$f" ] && return 0; done
  done
  return 1
}
left || exit 0
ipcrm --all >/dev/null 2>&1
rm -rf /dev/shm/* /dev/shm/.[!.]* /dev/shm/..?* /dev/mqueue/* /dev/mqueue/.[!.]* /dev/mqueue/..?* 2>/dev/null
! left`;

/** Whether a claimed server's namespace could be cleaned (CLEAN_NAMESPACE), to serve another sandbox. */
export async function cleanNamespace(server: BwrapServer): Promise<boolean> {
  try {
    const out = await server.run({ argv: ['/bin/sh', '-c', CLEAN_NAMESPACE], env: {}, cwd: '/', internal: true, timeoutMs: 30_000 });
    return out.state === 'ok' && out.result.exitCode === 0 && !server.dead;
  } catch {
    return false; // the server died meanwhile: it ends with its sandbox
  }
}

/** Ends a kept server and removes its cgroup (its folder is being removed, or the backend closes). */
export async function endKept(k: Kept): Promise<void> {
  await k.server.kill();
  await k.cgroup?.remove();
}
