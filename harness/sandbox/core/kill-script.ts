/**
 * Killing a whole process tree by a marker in its environment: every descendant inherits the
 * environment, so the marker survives setsid, double forks and re-parenting to init, where process
 * groups and parent links do not. The host backends scan /proc from Node (host/kill.ts); backends
 * whose processes live elsewhere (a container, a remote sandbox) run the same scan as a shell
 * function inside the sandbox, defined here once for all of them.
 */

/** Every process of one host, bwrap or Docker sandbox carries `REDGREEN_SANDBOX=<sandbox id>`. */
export const MARKER_VAR = 'REDGREEN_SANDBOX';

/** Every process of one command run inside a container or remote sandbox carries `REDGREEN_EXEC=<marker>`. */
export const EXEC_MARKER_VAR = 'REDGREEN_EXEC';

/** Scans a fork bomb may outrun before the reap gives up and its caller stops the whole sandbox. */
const REAP_ROUNDS = 100;

/**
 * `reap <marker> [spare-pid]`: SIGKILLs every process whose environment holds
 * `REDGREEN_EXEC=<marker>`, except the spared pid (the shell that asks, when it carries the marker
 * itself), until a scan finds none left — a process may fork between a scan and its kill. Bounded,
 * so a fork bomb cannot pin it: it then fails (as it does when it cannot fork) and says so on
 * stderr. Plain sh and grep, so any image with a shell runs it; /proc is the sandbox's own.
 * The scan runs grep directly in the command substitution (no pipeline), so no subshell carrying
 * the caller's marker lingers to be found, and the caller's own process is the only one to spare.
 */
export const REAP_FUNCTION = `reap() {
  i=0
  while [ $i -lt ${REAP_ROUNDS} ]; do
    found=
    for f in $(grep -lszx "${EXEC_MARKER_VAR}=$1" /proc/[0-9]*/environ); do
      p=\${f#/proc/}; p=\${p%/environ}
      # pid 1 is the init of a container started for one command (setup with network): it
      # carries the marker too, cannot be killed from inside, and ends with its container.
      [ "$p" = "$2" ] || [ "$p" = 1 ] && continue
      kill -9 "$p" 2>/dev/null
      found=1
    done
    [ -n "$found" ] || return 0
    i=$((i+1))
  done
  echo "redgreen: processes marked $1 survive SIGKILL" >&2
  return 1
}`;
