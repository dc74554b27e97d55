#!/usr/bin/env bash
# Stops the Podman API service test/helpers/podman-start.sh started (by its pid file), if any.
set -euo pipefail
PIDFILE=${REDGREEN_PODMAN_PIDFILE:-/run/redgreen-podman.pid}
[ -f "$PIDFILE" ] || exit 0
pid=$(cat "$PIDFILE")
kill "$pid" 2>/dev/null || true
for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
rm -f "$PIDFILE"
