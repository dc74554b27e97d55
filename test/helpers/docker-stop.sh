#!/usr/bin/env bash
# Stops the engine test/helpers/docker-start.sh started, by the pid in its own pid file, and
# waits for it to finish shutting down (it stops its containers and containerd first).
set -euo pipefail
PIDFILE=${REDGREEN_DOCKER_PIDFILE:-/run/redgreen-dockerd.pid}
[ -s "$PIDFILE" ] || { echo "no $PIDFILE: nothing to stop" >&2; exit 0; }
pid=$(cat "$PIDFILE")
kill -TERM "$pid" 2>/dev/null || exit 0
timeout 60 tail --pid="$pid" -f /dev/null || { echo "dockerd ($pid) still running after 60s" >&2; exit 1; }
