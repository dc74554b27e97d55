#!/usr/bin/env bash
# Starts Podman's Docker-compatible API service (rootful) for redgreen's tests and CI, unless one
# already answers on the socket. Its own socket; the containers and images are podman's usual
# store (/var/lib/containers).
#
#   eval "$(bash test/helpers/podman-start.sh)"   # prints `export CONTAINER_HOST=…`
#   bash test/helpers/podman-stop.sh              # stops it again (only if this script started it)
set -euo pipefail

SOCK=${REDGREEN_PODMAN_SOCK:-/run/redgreen-podman.sock}
PIDFILE=${REDGREEN_PODMAN_PIDFILE:-/run/redgreen-podman.pid}
LOG=${REDGREEN_PODMAN_LOG:-/tmp/redgreen-podman.log}
export CONTAINER_HOST="unix://$SOCK"

answers() { curl -sf --max-time 2 --unix-socket "$SOCK" http://podman/_ping >/dev/null 2>&1; }

if answers; then
  echo "export CONTAINER_HOST=$CONTAINER_HOST"
  exit 0
fi
command -v podman >/dev/null || { echo "podman not found: apt-get install -y podman catatonit" >&2; exit 1; }

rm -f "$SOCK"
# setsid: the service must not die with the shell that started it (CI steps are separate shells).
# Without CONTAINER_HOST: with it set, podman acts as a remote client of that socket.
(cd / && exec env -u CONTAINER_HOST setsid podman system service --time=0 "$CONTAINER_HOST" </dev/null >"$LOG" 2>&1) &
pid=$!
echo "$pid" >"$PIDFILE"

# The service has no readiness notification outside systemd: wait (bounded) for the API to answer.
for _ in $(seq 1 150); do
  if answers; then
    echo "export CONTAINER_HOST=$CONTAINER_HOST"
    exit 0
  fi
  kill -0 "$pid" 2>/dev/null || break
  sleep 0.2
done
echo "the podman service did not come up; its log ($LOG) ends with:" >&2
tail -n 20 "$LOG" >&2
exit 1
