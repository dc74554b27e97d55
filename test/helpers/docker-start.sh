#!/usr/bin/env bash
# Starts a private Docker engine for redgreen's tests and CI, unless one already answers on the
# socket: its own socket, pid file, exec root and data root, and no default bridge (sandboxes
# run with network "none"). Setup phases that opt into network get redgreen's own bridge network,
# "redgreen", created on first use; the engine keeps its iptables NAT so that bridge reaches the
# outside (a package registry), while the host's loopback stays out of reach.
#
#   eval "$(bash test/helpers/docker-start.sh)"   # prints `export DOCKER_HOST=…`
#   bash test/helpers/docker-stop.sh              # stops it again (only if this script started it)
set -euo pipefail

SOCK=${REDGREEN_DOCKER_SOCK:-/run/redgreen-docker.sock}
DATA=${REDGREEN_DOCKER_DATA:-/var/lib/redgreen-docker}
EXEC_ROOT=${REDGREEN_DOCKER_EXEC_ROOT:-/run/redgreen-docker}
PIDFILE=${REDGREEN_DOCKER_PIDFILE:-/run/redgreen-dockerd.pid}
LOG=${REDGREEN_DOCKER_LOG:-/tmp/redgreen-dockerd.log}
export DOCKER_HOST="unix://$SOCK"

if docker version --format '{{.Server.Version}}' >/dev/null 2>&1; then
  echo "export DOCKER_HOST=$DOCKER_HOST"
  exit 0
fi
command -v dockerd >/dev/null || { echo "dockerd not found: apt-get install -y docker.io" >&2; exit 1; }

mkdir -p "$DATA" "$EXEC_ROOT"
# setsid: the engine must not die with the shell that started it (CI steps are separate shells).
# From /: the engine writes files where it runs (an empty `oom` appeared in the repository).
(cd / && exec setsid dockerd --host "$DOCKER_HOST" --pidfile "$PIDFILE" --exec-root "$EXEC_ROOT" \
  --data-root "$DATA" --bridge=none \
  </dev/null >"$LOG" 2>&1) &
pid=$!

# dockerd has no readiness notification outside systemd: wait (bounded) for the API to answer.
for _ in $(seq 1 150); do
  if docker version --format '{{.Server.Version}}' >/dev/null 2>&1; then
    echo "export DOCKER_HOST=$DOCKER_HOST"
    exit 0
  fi
  kill -0 "$pid" 2>/dev/null || break
  sleep 0.2
done
echo "dockerd did not come up; its log ($LOG) ends with:" >&2
tail -n 20 "$LOG" >&2
exit 1
