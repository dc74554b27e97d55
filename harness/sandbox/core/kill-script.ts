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

/**
 * `pstate <pid>`: sets `st` to the process's state letter (R, S, Z…), or to nothing when it is
 * gone; read with the shell alone, so the command servers' scans of /proc fork nothing.
 */
export const PSTATE_FUNCTION = `pstate() {
  st=
  read -r st 2>/dev/null <"/proc/$1/stat" || return 0
  st=\${st##*) }; st=\${st%% *}
}`;

/** Scans a fork bomb may outrun before the reap gives up and its caller stops the whole sandbox. */
const REAP_ROUNDS = 100;

/**
 * `reap <marker> [spare-pid]`: SIGKILLs every process whose environment holds
 * `REDGREEN_EXEC=<marker>`, except the spared pid (the shell that asks, when it carries the marker
 * itself), until a scan finds none left — a process may fork between a scan and its kill, and a
 * killed one keeps its environment until the kernel has run its exit. A process whose environment
 * reads empty may be one of them inside an exec: its new environment is not there yet (env_end,
 * field 51 of its stat, is 0, or, while a running process's exec lays the strings out, equal to
 * env_start: look again next round), or the read caught the memory the exec dropped (read it
 * again); kernel threads and zombies (no exe) and processes started with `env -i` (not running,
 * both ends at one place) are not; a clean round ends with one more look for the marker. Bounded, so a fork bomb cannot
 * pin it: it then fails (as it does when it cannot fork) and says so on stderr. Plain sh and grep,
 * so any image with a shell runs it; /proc is the sandbox's own. The scans run grep directly in the command substitution (no pipeline), so no
 * subshell carrying the caller's marker lingers to be found, and the caller's own process is the
 * only one to spare.
 */
export const REAP_FUNCTION = `reap() {
  rm_=$1 rs_=$2 i=0
  while [ $i -lt ${REAP_ROUNDS} ]; do
    found= unsure=
    for f in $(grep -lszx "${EXEC_MARKER_VAR}=$rm_" /proc/[0-9]*/environ); do
      p=\${f#/proc/}; p=\${p%/environ}
      # pid 1 is the init of a container started for one command (setup with network): it
      # carries the marker too, cannot be killed from inside, and ends with its container.
      [ "$p" = "$rs_" ] || [ "$p" = 1 ] && continue
      kill -9 "$p" 2>/dev/null
      found=1
    done
    for f in $(grep -Lsz . /proc/[0-9]*/environ); do
      p=\${f#/proc/}; p=\${p%/environ}
      [ "$p" = "$rs_" ] || [ "$p" = 1 ] || [ ! -e "/proc/$p/exe" ] && continue
      read -r st 2>/dev/null <"/proc/$p/stat" || continue
      set -- \${st##*) }
      if [ "\${49:-0}" = 0 ]; then
        unsure=1
      elif [ "\${49}" = "\${48}" ] && { [ "$1" = R ] || [ "$1" = D ]; }; then
        unsure=1
      elif grep -qszx "${EXEC_MARKER_VAR}=$rm_" "/proc/$p/environ"; then
        kill -9 "$p" 2>/dev/null
        found=1
      fi
    done
    if [ -z "$found$unsure" ]; then
      # One more look for the marker, for a process the first scan caught inside an exec and
      # the second after it (two scans cannot read a process at the same moment).
      for f in $(grep -lszx "${EXEC_MARKER_VAR}=$rm_" /proc/[0-9]*/environ); do
        p=\${f#/proc/}; p=\${p%/environ}
        [ "$p" = "$rs_" ] || [ "$p" = 1 ] || found=1
      done
      [ -n "$found" ] || return 0
    fi
    i=$((i+1))
  done
  echo "redgreen: processes marked $rm_ survive SIGKILL" >&2
  return 1
}`;
