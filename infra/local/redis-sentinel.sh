#!/usr/bin/env bash
# A local Redis with failover: one master, one replica and three sentinels (Debian's redis-server and
# redis-sentinel), every one an unprivileged process on loopback, optionally with TLS and passwords as production
# has them. For the failover test (services/history/src/sentinel.int.test.ts) and for trying REDIS_SENTINELS locally.
#
#   infra/local/redis-sentinel.sh start  --dir DIR --base-port P [--password PW] [--sentinel-password PW]
#                                        [--tls-dir DIR (ca.crt, server.crt, server.key)] [--name mymaster]
#   infra/local/redis-sentinel.sh stop   --dir DIR
#   infra/local/redis-sentinel.sh node-stop  --dir DIR --node a|b [--kill]   (a starts as the master, b as its replica)
#   infra/local/redis-sentinel.sh node-start --dir DIR --node a|b
#   infra/local/redis-sentinel.sh master --dir DIR    prints the master's port, as the sentinels see it
#
# Ports: a P, b P+1, sentinels P+2, P+3, P+4. The sentinels declare a master down after 1 s without answers
# (production: 5–10 s, docs/operations.md) and need 2 of 3 to agree.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=lib.sh
source "$here/lib.sh"

cmd=${1:-}
shift || true
dir="" base="" password="" sentinel_password="" tls_dir="" name=mymaster node="" kill=no
while [[ $# -gt 0 ]]; do
  case $1 in
  --dir) dir=$2; shift 2 ;;
  --base-port) base=$2; shift 2 ;;
  --password) password=$2; shift 2 ;;
  --sentinel-password) sentinel_password=$2; shift 2 ;;
  --tls-dir) tls_dir=$2; shift 2 ;;
  --name) name=$2; shift 2 ;;
  --node) node=$2; shift 2 ;;
  --kill) kill=yes; shift ;;
  *) dg_die "redis-sentinel.sh: unknown argument $1" ;;
  esac
done
[[ -n $dir ]] || dg_die "redis-sentinel.sh: --dir is required"

# What `start` was given, kept for node-start and the other commands.
settings=$dir/settings
load_settings() {
  [[ -f $settings ]] || dg_die "no Redis Sentinel set at $dir (start it first)"
  # shellcheck disable=SC1090
  source "$settings"
}

cli() { # cli PORT [AUTH] ARGS...: redis-cli with the set's TLS
  local port=$1 auth=$2
  shift 2
  local args=(-h 127.0.0.1 -p "$port" --no-auth-warning)
  [[ -n $tls_dir ]] && args+=(--tls --cacert "$tls_dir/ca.crt")
  [[ -n $auth ]] && args+=(-a "$auth")
  timeout 3 redis-cli "${args[@]}" "$@"
}

# A value as a double-quoted string of redis.conf (passwords may hold spaces).
quoted() {
  local v=${1//\\/\\\\}
  printf '"%s"' "${v//\"/\\\"}"
}

# The part of every configuration that makes a listener: plain port, or TLS only.
listener_conf() { # listener_conf PORT
  if [[ -n $tls_dir ]]; then
    printf 'port 0\ntls-port %s\ntls-cert-file %s\ntls-key-file %s\ntls-ca-cert-file %s\ntls-auth-clients no\ntls-replication yes\n' \
      "$1" "$tls_dir/server.crt" "$tls_dir/server.key" "$tls_dir/ca.crt"
  else
    printf 'port %s\n' "$1"
  fi
}

render_node() { # render_node a|b
  local n=$1 port
  if [[ $n == a ]]; then port=$base; else port=$((base + 1)); fi
  mkdir -p "$dir/$n"
  {
    printf 'bind 127.0.0.1\nprotected-mode yes\ndaemonize no\ndir %s\nlogfile ""\nsave ""\nappendonly no\n' "$dir/$n"
    printf 'maxmemory 256mb\nmaxmemory-policy noeviction\nreplica-announce-ip 127.0.0.1\n'
    listener_conf "$port"
    if [[ -n $password ]]; then printf 'requirepass %s\nmasterauth %s\n' "$(quoted "$password")" "$(quoted "$password")"; fi
    if [[ $n == b ]]; then printf 'replicaof 127.0.0.1 %s\n' "$base"; fi
  } >"$dir/$n/redis.conf"
}

render_sentinel() { # render_sentinel INDEX (sentinels rewrite their file: written once, at start)
  local i=$1 port=$((base + 1 + $1))
  mkdir -p "$dir/s$i"
  {
    printf 'bind 127.0.0.1\nprotected-mode no\ndaemonize no\ndir %s\nlogfile ""\n' "$dir/s$i"
    printf 'sentinel announce-ip 127.0.0.1\nsentinel resolve-hostnames no\n'
    listener_conf "$port"
    printf 'sentinel monitor %s 127.0.0.1 %s 2\n' "$name" "$base"
    printf 'sentinel down-after-milliseconds %s 1000\nsentinel failover-timeout %s 5000\nsentinel parallel-syncs %s 1\n' \
      "$name" "$name" "$name"
    if [[ -n $password ]]; then printf 'sentinel auth-pass %s %s\n' "$name" "$(quoted "$password")"; fi
    if [[ -n $sentinel_password ]]; then
      printf 'requirepass %s\nsentinel sentinel-pass %s\n' "$(quoted "$sentinel_password")" "$(quoted "$sentinel_password")"
    fi
  } >"$dir/s$i/sentinel.conf"
}

start_process() { # start_process ID CONF KIND PORT AUTH
  local id=$1 conf=$2 kind=$3 port=$4 auth=$5 pidfile=$dir/$1/redis.pid
  if dg_alive "$pidfile"; then return 0; fi
  dg_port_busy "$port" && dg_die "port $port is taken by another process; choose another --base-port"
  dg_unpriv_prepare "$dir/$id"
  local binary=redis-server
  if [[ $kind == sentinel ]]; then binary=redis-sentinel; fi
  # (The signature dg_alive checks is the binary's name: Redis retitles its process `redis-server 127.0.0.1:PORT`.)
  dg_spawn "$pidfile" "$dir/$id/redis.log" "$binary" "${DG_UNPRIV_PREFIX[@]}" "$binary" "$conf"
  for ((i = 0; i < 100; i++)); do
    if cli "$port" "$auth" ping 2>/dev/null | grep -q PONG; then return 0; fi
    dg_alive "$pidfile" || break
    sleep 0.1
  done
  tail -n 20 "$dir/$id/redis.log" >&2 || true
  dg_die "$kind $id did not start on port $port"
}

case $cmd in
start)
  [[ -n $base ]] || dg_die "redis-sentinel.sh start: --base-port is required"
  command -v redis-sentinel >/dev/null 2>&1 || dg_die "redis-sentinel is not installed (Debian: apt-get install redis-sentinel)"
  mkdir -p "$dir"
  printf 'base=%q\npassword=%q\nsentinel_password=%q\ntls_dir=%q\nname=%q\n' \
    "$base" "$password" "$sentinel_password" "$tls_dir" "$name" >"$settings"
  chmod 600 "$settings"
  render_node a
  render_node b
  start_process a "$dir/a/redis.conf" server "$base" "$password"
  start_process b "$dir/b/redis.conf" server "$((base + 1))" "$password"
  for i in 1 2 3; do
    render_sentinel "$i"
    start_process "s$i" "$dir/s$i/sentinel.conf" sentinel "$((base + 1 + i))" "$sentinel_password"
  done
  # Ready when every sentinel knows the replica and the other two sentinels.
  for ((i = 0; i < 200; i++)); do
    ok=0
    for s in 2 3 4; do
      info=$(cli "$((base + s))" "$sentinel_password" SENTINEL master "$name" 2>/dev/null | tr '\n' ' ')
      [[ $info =~ num-slaves\ 1\  && $info =~ num-other-sentinels\ 2\  ]] && ok=$((ok + 1))
    done
    if ((ok == 3)); then
      dg_log "  redis sentinel set '$name' up: master $base, replica $((base + 1)), sentinels $((base + 2))–$((base + 4))${tls_dir:+ (TLS)}"
      exit 0
    fi
    sleep 0.1
  done
  dg_die "the sentinels did not agree on master '$name' and its replica within 20 s (logs in $dir/*/redis.log)"
  ;;
stop)
  for id in s1 s2 s3 b a; do dg_stop "$dir/$id/redis.pid" 10; done
  ;;
node-stop)
  [[ $node == a || $node == b ]] || dg_die "node-stop: --node a|b"
  if [[ $kill == yes ]]; then dg_kill "$dir/$node/redis.pid"; else dg_stop "$dir/$node/redis.pid" 10; fi
  ;;
node-start)
  [[ $node == a || $node == b ]] || dg_die "node-start: --node a|b"
  load_settings
  port=$base
  if [[ $node == b ]]; then port=$((base + 1)); fi
  # Its file still names its old role; the sentinels turn it into a replica of the current master.
  start_process "$node" "$dir/$node/redis.conf" server "$port" "$password"
  ;;
master)
  load_settings
  cli "$((base + 2))" "$sentinel_password" SENTINEL get-master-addr-by-name "$name" | tail -n 1
  ;;
*) dg_die "usage: redis-sentinel.sh start|stop|node-stop|node-start|master --dir DIR [...]" ;;
esac
