#!/usr/bin/env bash
# Start, stop or check a local ClickHouse as an unprivileged process (Debian's 18.16 or any later build).
# --config-d / --users-d add files to the server's config.d / users.d folders, which ClickHouse merges over our
# config.xml / users.xml (a node of the local cluster, infra/local/clickhouse-cluster.sh, gets its cluster that way).
#   infra/local/clickhouse.sh start  --dir DIR --http-port PORT --tcp-port PORT [--config-d FILE]... [--users-d FILE]...
#   infra/local/clickhouse.sh stop   --dir DIR
#   infra/local/clickhouse.sh status --dir DIR
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=lib.sh
source "$here/lib.sh"

cmd=${1:-}
shift || true
dir="" http_port="" tcp_port=""
config_d=() users_d=()
while [[ $# -gt 0 ]]; do
  case $1 in
  --dir) dir=$2; shift 2 ;;
  --http-port) http_port=$2; shift 2 ;;
  --tcp-port) tcp_port=$2; shift 2 ;;
  --config-d) config_d+=("$2"); shift 2 ;;
  --users-d) users_d+=("$2"); shift 2 ;;
  *) dg_die "clickhouse.sh: unknown argument $1" ;;
  esac
done
[[ -n $dir ]] || dg_die "clickhouse.sh: --dir is required"
pidfile=$dir/clickhouse.pid

find_server() {
  local c
  for c in clickhouse-server /usr/sbin/clickhouse-server /usr/bin/clickhouse-server; do
    if command -v "$c" >/dev/null 2>&1; then
      command -v "$c"
      return 0
    fi
  done
  return 1
}

case $cmd in
start)
  [[ -n $http_port && -n $tcp_port ]] || dg_die "clickhouse.sh start: --http-port and --tcp-port are required"
  server=$(find_server) || dg_die "clickhouse-server is not installed (Debian: apt-get install clickhouse-server)"
  if dg_alive "$pidfile"; then
    dg_log "  clickhouse already running (pid $(dg_pid_of "$pidfile"), http port $http_port)"
    exit 0
  fi
  dg_port_busy "$http_port" && dg_die "port $http_port is taken by another process; set another ClickHouse port (docs/development.md)"
  dg_port_busy "$tcp_port" && dg_die "port $tcp_port is taken by another process; set another ClickHouse port (docs/development.md)"
  mkdir -p "$dir/config" "$dir/data" "$dir/tmp" "$dir/user_files" "$dir/format_schemas" "$dir/log"
  sed -e "s#@DATA_DIR@#$dir#g" -e "s#@CONFIG_DIR@#$dir/config#g" \
    -e "s#@HTTP_PORT@#$http_port#g" -e "s#@TCP_PORT@#$tcp_port#g" \
    "$here/clickhouse/config.xml" >"$dir/config/config.xml"
  cp "$here/clickhouse/users.xml" "$dir/config/users.xml"
  rm -rf "$dir/config/config.d" "$dir/config/users.d"
  if ((${#config_d[@]})); then mkdir -p "$dir/config/config.d" && cp "${config_d[@]}" "$dir/config/config.d/"; fi
  if ((${#users_d[@]})); then mkdir -p "$dir/config/users.d" && cp "${users_d[@]}" "$dir/config/users.d/"; fi
  dg_unpriv_prepare "$dir"
  dg_spawn "$pidfile" "$dir/log/stdout.log" "--config-file=$dir/config/config.xml" \
    "${DG_UNPRIV_PREFIX[@]}" "$server" "--config-file=$dir/config/config.xml"
  if dg_wait_http "http://127.0.0.1:$http_port/ping" 60 "$pidfile"; then
    dg_log "  clickhouse up on 127.0.0.1:$http_port (native $tcp_port)"
    exit 0
  fi
  tail -n 30 "$dir/log/clickhouse-server.err.log" "$dir/log/stdout.log" >&2 2>/dev/null || true
  dg_stop "$pidfile" 10
  # Bound by another process between the checks above and the server binding it (a shared machine's ephemeral ports).
  cat "$dir/log/clickhouse-server.err.log" "$dir/log/stdout.log" 2>/dev/null | grep -q "Address already in use" &&
    dg_die "port $http_port or $tcp_port is taken by another process (bound after the check); set other ClickHouse ports (docs/development.md)"
  dg_die "clickhouse did not start on port $http_port"
  ;;
stop) dg_stop "$pidfile" 30 ;;
status)
  if dg_alive "$pidfile"; then echo "running pid=$(dg_pid_of "$pidfile")"; else
    echo stopped
    exit 1
  fi
  ;;
*) dg_die "usage: clickhouse.sh start|stop|status --dir DIR [--http-port PORT --tcp-port PORT]" ;;
esac
