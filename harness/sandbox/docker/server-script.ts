import { HOME_DIR, SANDBOX_GID, SANDBOX_UID, SCRATCH_DIR, WORKDIR } from './config.js';
import { MEMORY_FILES, MOUNTS, PIDS_FILES } from './limit-probe.js';
import { PSTATE_FUNCTION } from '../core/kill-script.js';
import { FULL_BELOW_BYTES } from '../core/limits.js';
import { PYTHON_SERVER } from './server-python.js';

/**
 * The command server: the main process of every sandbox container (under the container's init),
 * a POSIX sh loop, so any image with /bin/sh, setpriv (util-linux) and GNU env (coreutils ≥ 8.31:
 * --chdir, --default-signal) runs it. The harness attaches to it once and runs every command
 * through it instead of a `docker exec` each (an exec costs the engine and runc far more than a
 * small test run). An image without those tools keeps a plain `sleep` and gets an exec per
 * command (exec.ts). An image with python3 runs the same server in Python (server-python.ts),
 * which it hands over to once it knows the sandbox's folders' state: it starts a command with one
 * process where this loop needs four.
 *
 * It starts by saying `redgreen-server ready <fresh>` (fresh: 1 when the sandbox's folders were
 * empty, as the image left them: only then can a reset give the next sandbox what a new container
 * would), or `redgreen-server keeper`.
 * Its first input line is discarded: the harness ends it with a newline, and Podman passes the
 * body of the attach request into the container's input before it.
 * Protocol, one request per line on stdin:
 *   run <id> <token> <words>   run the command (words: shell-quoted argv, a newline as "$NL")
 *   put <id> <token> <words>   the same, its input following the request in chunks (how files
 *                              come in: tar, extracting as the sandbox user; never killed)
 *   kill <id>                  stop command <id> and everything it started, if it still runs
 * Once a command has ended and nothing it started is left, its runner writes
 * `<token> <id> <exit code> <state> <oom kills> <pids refusals> <full mount>` on stdout and
 * `<token> <id>` on stderr, straight after the command's own bytes (state: ok, dirty when something
 * could not be killed, nostart when the command could not be forked; the cgroup's counters, and
 * after a failure a volume or /tmp left full, or "-": what limit-probe.ts asks otherwise). Requests are read in order, so a `kill` can only ever reach the
 * command it names. A runner killed by the signal before it could trap it never started its
 * command: the server frames it instead.
 *
 * Who can do what: the server runs as root with no capability but SETUID/SETGID (to start
 * commands) and no-new-privileges; each command runs as the sandbox user through setpriv, with no
 * capability at all (setuid to a non-root uid clears them) and no way back (no-new-privileges
 * ignores setuid bits and file capabilities). The sandbox user cannot signal, trace or read a
 * root process, nor open its stdin: a command can neither stop the server nor learn the token it
 * will be framed with. Were it to forge a frame anyway, it would gain nothing: it controls its own
 * output and exit code already, the frame only ends what the harness reads of it, and nothing of
 * it survives into the next command (every process of the sandbox user is killed before a frame
 * says "ok", and the next command gets a new token).
 *
 * The server writes nothing but frames: the runner's stray messages would land in a command's
 * output. A command's stdout and stderr are the same pipes, opened anew (/proc/self/fd): a command
 * that makes its output non-blocking (Node does) changes its own open file, never the server's, so
 * a frame is never cut short by a full pipe. Background jobs of a shell ignore SIGINT and SIGQUIT, so `env --default-signal` gives
 * every command a fresh process's signal dispositions.
 */
const AS_USER = `setpriv --reuid=${SANDBOX_UID} --regid=${SANDBOX_GID} --clear-groups --`;

export const SERVER_SCRIPT = `NL='
'
S=$$
cd /
if ! command -v setpriv >/dev/null 2>&1 || ! command -v tar >/dev/null 2>&1 || ! env -i --chdir=/ --default-signal /bin/sh -c : >/dev/null 2>&1 ||
  case $(head --version 2>/dev/null) in *coreutils*) false ;; *) true ;; esac; then
  echo 'redgreen-server keeper'
  exec sleep 2147483647
fi
fresh=1
for f in ${WORKDIR}/* ${WORKDIR}/.[!.]* ${WORKDIR}/..?* ${SCRATCH_DIR}/* ${SCRATCH_DIR}/.[!.]* ${SCRATCH_DIR}/..?* ${HOME_DIR}/* ${HOME_DIR}/.[!.]* ${HOME_DIR}/..?*; do
  [ -e "$f" ] || [ -L "$f" ] && fresh=0
done
# The same server in Python, which starts a command with one process instead of four (server-python.ts);
# it comes back here (this script is its last argument) if it cannot run.
if [ -n "$1" ] && command -v python3 >/dev/null 2>&1; then
  exec python3 -I -S -c "$1" "$fresh" "$2"
fi
echo "redgreen-server ready $fresh"
report() {
  printf '%s %s %s %s %s %s %s\\n' "$tok" "$id" "\${code:-255}" "$state" "\${oom:--}" "\${pmax:--}" "\${full:--}"
  printf '%s %s\\n' "$tok" "$id" >&2
}
limits() {
  for f in ${MEMORY_FILES.join(' ')}; do
    [ -r "$f" ] || continue
    while read -r k v; do [ "$k" != oom_kill ] || oom=$v; done <"$f"; break
  done
  for f in ${PIDS_FILES.join(' ')}; do
    [ -r "$f" ] || continue
    while read -r k v; do [ "$k" != max ] || pmax=$v; done <"$f"; break
  done
  [ "$code" != 0 ] || return 0
  # One fork for df, whose lines this shell reads (a short here-document starts no process).
  out=$(df -Pk ${MOUNTS.map(([m]) => m).join(' ')} 2>/dev/null)
  while read -r _ _ _ a _ m; do
    case $a in '' | *[!0-9]*) ;; *) [ "$a" -ge ${FULL_BELOW_BYTES / 1024} ] || { full=$m; break; } ;; esac
  done <<EOF
$out
EOF
}
${PSTATE_FUNCTION}
sweep() { ${AS_USER} /bin/sh -c 'kill -9 -1' </dev/null >/dev/null 2>&1; }
run() {
  trap : USR1
  state=nostart code=
  trap report EXIT
  # Out of memory, the kernel kills a command before the server (its pick is the largest process).
  echo 1000 >/proc/self/oom_score_adj 2>/dev/null
  read -r R _ </proc/self/stat
  eval "set -- $words"
  if [ "$kind" = put ]; then
    # Input chunks (<length> line, then that many bytes; 0 ends them), exactly: what the command
    # leaves unread is drained (cat only if a line is left), so the next request is read as one.
    while IFS= read -r len && [ "$len" -gt 0 ]; do head -c "$len"; done |
      { ${AS_USER} "$@" >/proc/self/fd/1 2>/proc/self/fd/2; c=$?; ! IFS= read -r _ || cat >/dev/null; exit $c; }
    code=$? state=dirty
  else
    ${AS_USER} "$@" </dev/null >/proc/self/fd/1 2>/proc/self/fd/2 &
    child=$! state=dirty
    while :; do
      wait "$child"; code=$?
      [ -e "/proc/$child" ] || break
      n=0
      while pstate "$child"; [ -n "$st" ] && [ "$st" != Z ]; do
        [ $n -lt 100 ] || exit
        sweep; n=$((n+1))
      done
    done
  fi
  n=0
  while [ $n -lt 5000 ]; do
    live= zombie=
    for d in /proc/[0-9]*; do
      p=\${d#/proc/}
      [ "$p" = 1 ] || [ "$p" = "$S" ] || [ "$p" = "$R" ] && continue
      pstate "$p"
      case $st in '') ;; Z|X) zombie=1 ;; *) live=1; break ;; esac
    done
    [ -n "$live$zombie" ] || { state=ok; limits; exit; }
    [ -z "$live" ] || sweep
    n=$((n+1))
  done
  exit
}
IFS= read -r _ || exit
runner=
while IFS= read -r req; do
  kind=\${req%% *}; rest=\${req#* }; id=\${rest%% *}; rest=\${rest#* }
  case $kind in
    run|put) tok=\${rest%% *}; words=\${rest#* }
      [ -z "$runner" ] || wait "$runner"
      runner= current=$id
      if [ "$kind" = put ]; then (run); else run & runner=$!; fi ;;
    kill) [ -n "$runner" ] && [ "$id" = "$current" ] || continue
      kill -USR1 "$runner" 2>/dev/null
      wait "$runner"
      [ $? -ne 138 ] || { code=137 state=ok; report; }
      runner= current= ;;
    *) exit 3 ;;
  esac
done`;

/**
 * The container's main process: the server, as sh's script (its $0 names it in process lists),
 * handing over to its Python version when the image can run it, unless `shellOnly`.
 */
export function serverCmd(shellOnly = false): string[] {
  return ['/bin/sh', '-c', SERVER_SCRIPT, 'redgreen-server', shellOnly ? '' : PYTHON_SERVER, SERVER_SCRIPT];
}
/** All the server keeps of root's powers: starting commands as the sandbox user. */
export const SERVER_CAPS = ['SETUID', 'SETGID'];
