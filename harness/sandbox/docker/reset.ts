import { HOME_DIR, SCRATCH_DIR, WORKDIR } from './config.js';
import type { PreparedContainer } from './container.js';

/**
 * What a sandbox may have changed, emptied for the next sandbox (run as the sandbox user through
 * the server, which then checks that no process is left): the volumes (workspace, scratch, HOME,
 * back to a new folder's mode), /tmp, /dev/shm and /dev/mqueue (the only other writable places on
 * a read-only root) and System V IPC objects. One `find` does it all in the common case; folders a
 * command made read-only are made writable and emptied on a second pass. Exits 0 only when every
 * place is empty and no IPC object is left; says what is left otherwise. The Python server does
 * the same without starting a process (server-python-files.ts).
 */
export const RESET_VOLUMES = [WORKDIR, SCRATCH_DIR, HOME_DIR];
export const RESET_OTHERS = ['/tmp', '/dev/shm', '/dev/mqueue'];
const PLACES = [...RESET_VOLUMES, ...RESET_OTHERS].join(' ');
const any = (paths: string[]) => paths.map((p) => `-path ${p}`).join(' -o ');
export const RESET_SCRIPT = `clear() {
  find ${PLACES} -depth \\( ${any(RESET_VOLUMES)} \\) \\( -perm 0755 -o -exec chmod 755 {} + \\) -o \\( ${any(RESET_OTHERS)} \\) -o -delete 2>/dev/null
}
left() {
  for d in ${PLACES}; do
    [ -d "$d" ] || continue
    for f in "$d"/* "$d"/.[!.]* "$d"/..?*; do
      [ -e "$f" ] || [ -L "$f" ] || continue
      left=$f; return 0
    done
  done
  return 1
}
ipc() {
  for f in /proc/sysvipc/shm /proc/sysvipc/sem /proc/sysvipc/msg; do
    [ -r "$f" ] || continue
    { read -r _; read -r x; } <"$f" && { left="an IPC object ($f)"; return 0; }
  done
  return 1
}
clear
if left; then chmod -R u+rwx ${PLACES} 2>/dev/null; clear; fi
if left; then echo "left: $left" >&2; exit 1; fi
if ipc; then ipcrm -a 2>/dev/null; fi
if ipc; then echo "left: $left" >&2; exit 1; fi`;

/**
 * Makes a container fit for the next sandbox of the run: RESET_SCRIPT through its server (which
 * frames it only once no process of the sandbox user is left). Its limit counters (in the server's
 * frame) are kept as they are now, so a limit the next sandbox runs into is told apart from one
 * before it. False when anything could not be emptied or checked: the container must go.
 */
export async function resetContainer(p: PreparedContainer): Promise<boolean> {
  if (!p.server || !p.resettable) return false;
  const o = await p.server.run({ argv: ['/bin/sh', '-c', RESET_SCRIPT], env: {}, cwd: '/', internal: true });
  if (o.state !== 'ok' || o.result.exitCode !== 0 || !o.limits) return false;
  p.counters = o.limits.counters;
  return true;
}
