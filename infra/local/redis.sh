#!/usr/bin/env bash
# Start, stop or check a local Redis as an unprivileged process.
#   infra/local/redis.sh start  --dir DIR --port PORT [--persist]
#   infra/local/redis.sh stop   --dir DIR
#   infra/local/redis.sh status --dir DIR
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=lib.sh
source "$here/lib.sh"

cmd=${1:-}
shift || true
dir="" port="" persist=no
while [[ $# -gt 0 ]]; do
  case $1 in
  --dir) dir=$2; shift 2 ;;
  --port) port=$2; shift 2 ;;
  --persist) persist=yes; shift ;;
  *) dg_die "redis.sh: unknown argument $1" ;;
  esac
done
[[ -n $dir ]] || dg_die "redis.sh: --dir is required"
pidfile=$dir/redis.pid

case $cmd in
start)
  [[ -n $port ]] || dg_die "redis.sh start: --port is required"
  command -v redis-server >/dev/null || dg_die "redis-server is not installed (Debian: apt-get install redis-server)"
  if dg_alive "$pidfile"; then
    dg_log "  redis already running (pid $(dg_pid_of "$pidfile"), port $port)"
    exit 0
  fi
  dg_port_busy "$port" && dg_die "port $port is taken by another process; set another Redis port (docs/development.md)"
  mkdir -p "$dir/data"
  sed -e "s#@PORT@#$port#g" -e "s#@DATA_DIR@#$dir/data#g" -e "s#@PERSIST@#$persist#g" \
    "$here/redis/redis.conf" >"$dir/redis.conf"
  dg_unpriv_prepare "$dir"
  dg_spawn "$pidfile" "$dir/redis.log" "redis-server" "${DG_UNPRIV_PREFIX[@]}" redis-server "$dir/redis.conf"
  for ((i = 0; i < 100; i++)); do
    if redis-cli -p "$port" ping 2>/dev/null | grep -q PONG; then
      dg_log "  redis up on 127.0.0.1:$port"
      exit 0
    fi
    dg_alive "$pidfile" || break
    sleep 0.1
  done
  tail -n 20 "$dir/redis.log" >&2 || true
  dg_stop "$pidfile" 5
  # Bound by another process between the check above and redis binding it (a shared machine's ephemeral ports).
  grep -q "Address already in use" "$dir/redis.log" 2>/dev/null &&
    dg_die "port $port is taken by another process (bound after the check); set another Redis port (docs/development.md)"
  dg_die "redis did not start on port $port"
  ;;
stop) dg_stop "$pidfile" 10 ;;
status)
  if dg_alive "$pidfile"; then echo "running pid=$(dg_pid_of "$pidfile")"; else
    echo stopped
    exit 1
  fi
  ;;
*) dg_die "usage: redis.sh start|stop|status --dir DIR [--port PORT] [--persist]" ;;
esac
