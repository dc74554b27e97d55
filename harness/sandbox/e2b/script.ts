import { EXEC_MARKER_VAR, REAP_FUNCTION } from '../core/kill-script.js';

/**
 * The small POSIX-sh helper the e2b backend installs in every sandbox (once: at creation, or with
 * the sandbox's first call, see prelude.ts) and the command lines that call it. Doing these steps inside the sandbox keeps each one a single request:
 * unpacking an archive, refusing paths through symlinks, reading a file, and killing every process
 * one command started (it survives setsid and re-parenting, because the marker is in the
 * environment every descendant inherits: core/kill-script.ts, shared with the Docker backend).
 */

/** Exit codes of the helper the backend tells apart. */
export const HELPER_UNSAFE_PATH = 3;
export const HELPER_NO_SUCH_FILE = 4;

/** Single-quotes a word for sh; any byte string survives. */
export function q(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

const HELPER = `# redgreen helper (harness/sandbox/e2b/script.ts); R is the folder holding bin/, workspace/, scratch/
R=\${0%/bin/rg}
op=$1; shift
[ -d "$R/scratch" ] || mkdir -p "$R/workspace" "$R/scratch" || exit 1

# A path relative to R is safe when no component is '..' and no existing component is a symlink.
safe() {
  case "/$1/" in */../*) echo "redgreen: unsafe path $1" >&2; return 1;; esac
  p=$R; rest=$1
  while [ -n "$rest" ]; do
    c=\${rest%%/*}
    if [ "$c" = "$rest" ]; then rest=; else rest=\${rest#*/}; fi
    [ -z "$c" ] && continue
    p=$p/$c
    if [ -L "$p" ]; then echo "redgreen: $1 goes through a symlink (\${p#$R/})" >&2; return 1; fi
    [ -e "$p" ] || return 0
  done
}

${REAP_FUNCTION}

case $op in
run)
  # run <cwd> argv...: the command, then whatever it left behind is killed (spare this shell).
  cd "$1" || exit 127
  shift
  "$@" &
  wait $!
  code=$?
  env -u ${EXEC_MARKER_VAR} /bin/sh "$0" kill "$${EXEC_MARKER_VAR}" $$ >/dev/null 2>&1
  exit $code ;;
kill)
  # kill <marker> [spare-pid]: SIGKILL every process carrying the marker until none is left.
  reap "$1" "$2"; exit $? ;;
put|put64)
  # put <archive> | put64 <base64 archive>: unpack into R after checking every member path. A put
  # deferred into a command's prelude runs with that command's environment: tar must not read it.
  unset TAR_OPTIONS
  if [ "$op" = put64 ]; then a=$R/.upload-$$.tar; printf '%s' "$1" | base64 -d >"$a" || exit 1; else a=$1; fi
  trap 'rm -f "$a" "$a.list"' EXIT
  tar -tf "$a" --quoting-style=literal >"$a.list" || exit 1
  while IFS= read -r m; do safe "$m" || exit ${HELPER_UNSAFE_PATH}; done <"$a.list"
  tar -xpf "$a" -C "$R" --no-same-owner ;;
rm)
  for m in "$@"; do safe "$m" || exit ${HELPER_UNSAFE_PATH}; done
  for m in "$@"; do rm -rf "$R/$m" || exit 1; done ;;
check)
  for m in "$@"; do safe "$m" || exit ${HELPER_UNSAFE_PATH}; done ;;
place)
  # place <uploaded file> <path> <mode>: moves a streamed upload onto a checked path.
  trap 'rm -f "$1"' EXIT
  safe "$2" || exit ${HELPER_UNSAFE_PATH}
  mkdir -p "$(dirname "$R/$2")" && rm -f "$R/$2" && mv "$1" "$R/$2" && chmod "$3" "$R/$2" ;;
file)
  # file <path>: succeeds when it is a regular file reached through no symlink.
  safe "$1" || exit ${HELPER_UNSAFE_PATH}
  [ -f "$R/$1" ] && [ ! -L "$R/$1" ] || { echo "redgreen: $1: no such file" >&2; exit ${HELPER_NO_SUCH_FILE}; } ;;
cat)
  safe "$1" || exit ${HELPER_UNSAFE_PATH}
  [ -f "$R/$1" ] || { echo "redgreen: $1: no such file" >&2; exit ${HELPER_NO_SUCH_FILE}; }
  base64 -w0 <"$R/$1" ;;
*)
  echo "redgreen: unknown helper op $op" >&2; exit 2 ;;
esac
`;

/** The root folder, relative to the user's home (envd resolves relative paths there). */
export const ROOT_IN_HOME = 'redgreen';
/** Where the helper goes, relative to the user's home. */
export const HELPER_PATH = `${ROOT_IN_HOME}/bin/rg`;

/** The helper's text: written by a sandbox's init (creator.ts) or by its first call's prelude (prelude.ts). */
export function helperScript(): string {
  return HELPER;
}

/**
 * The fallback when envd's upload answer does not say where the helper landed (a relative path):
 * prints the root folder.
 */
export function rootCommand(): string {
  return `cd && printf '%s' "$PWD/${ROOT_IN_HOME}"`;
}

/** A helper invocation; `bash -l -c` (how envd runs commands) execs straight into it. */
export function helperCommand(root: string, args: readonly string[]): string {
  return `exec /bin/sh ${q(`${root}/bin/rg`)} ${args.map(q).join(' ')}`;
}
