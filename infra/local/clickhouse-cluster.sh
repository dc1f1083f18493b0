#!/usr/bin/env bash
# A local ClickHouse cluster: one ZooKeeper (infra/local/zookeeper.sh) and SHARDS × REPLICAS ClickHouse servers
# (infra/local/clickhouse.sh, Debian's 18.16 or any later build), every one an unprivileged process on loopback.
# Each server knows the cluster (`remote_servers`), ZooKeeper, its `{shard}`/`{replica}` macros and the distributed
# DDL queue, so `CREATE … ON CLUSTER`, ReplicatedMergeTree and Distributed tables work as on a real cluster.
#
#   infra/local/clickhouse-cluster.sh start  --dir DIR --base-port B [--shards 2] [--replicas 2] [--name depthgate]
#   infra/local/clickhouse-cluster.sh stop   --dir DIR
#   infra/local/clickhouse-cluster.sh status --dir DIR
#   infra/local/clickhouse-cluster.sh node-stop  --dir DIR --node s2r1 [--kill]   (--kill: SIGKILL, a crash)
#   infra/local/clickhouse-cluster.sh node-start --dir DIR --node s2r1
#
# Ports, from B: ZooKeeper B; server n (1, 2, … in shard-major order: s1r1, s1r2, s2r1, …) HTTP B+10+n, native
# B+20+n, interserver (replication) B+30+n. DIR/cluster.json describes the cluster for tests and tools.
# The servers are sized for a shared 2-core development machine: small caches, few threads.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=lib.sh
source "$here/lib.sh"

cmd=${1:-}
shift || true
dir="" base="" shards=2 replicas=2 name=depthgate node="" kill=no
while [[ $# -gt 0 ]]; do
  case $1 in
  --dir) dir=$2; shift 2 ;;
  --base-port) base=$2; shift 2 ;;
  --shards) shards=$2; shift 2 ;;
  --replicas) replicas=$2; shift 2 ;;
  --name) name=$2; shift 2 ;;
  --node) node=$2; shift 2 ;;
  --kill) kill=yes; shift ;;
  *) dg_die "clickhouse-cluster.sh: unknown argument $1" ;;
  esac
done
[[ -n $dir ]] || dg_die "clickhouse-cluster.sh: --dir is required"

# The nodes of a cluster that was started: "name shard replica http tcp interserver" per line.
nodes_file=$dir/nodes

node_line() {
  local n
  n=$(awk -v want="$1" '$1 == want' "$nodes_file" 2>/dev/null)
  [[ -n $n ]] || dg_die "no node '$1' in the cluster at $dir (nodes: $(awk '{print $1}' "$nodes_file" 2>/dev/null | xargs))"
  printf '%s\n' "$n"
}

start_node() { # start_node NAME SHARD REPLICA HTTP TCP INTERSERVER
  "$here/clickhouse.sh" start --dir "$dir/$1" --http-port "$4" --tcp-port "$5" \
    --config-d "$dir/config/$1.xml" --users-d "$dir/config/users.xml"
}

render_configs() {
  local zk_port=$1 line n s r http tcp inter shard_xml=""
  mkdir -p "$dir/config"
  for ((s = 1; s <= shards; s++)); do
    shard_xml+="            <shard>
                <internal_replication>true</internal_replication>
"
    for ((r = 1; r <= replicas; r++)); do
      n=$(((s - 1) * replicas + r))
      shard_xml+="                <replica><host>127.0.0.1</host><port>$((base + 20 + n))</port></replica>
"
    done
    shard_xml+="            </shard>
"
  done
  : >"$nodes_file"
  for ((s = 1; s <= shards; s++)); do
    for ((r = 1; r <= replicas; r++)); do
      n=$(((s - 1) * replicas + r))
      http=$((base + 10 + n))
      tcp=$((base + 20 + n))
      inter=$((base + 30 + n))
      line="s${s}r${r} $s $r $http $tcp $inter"
      echo "$line" >>"$nodes_file"
      cat >"$dir/config/s${s}r${r}.xml" <<EOF
<?xml version="1.0"?>
<!-- Node s${s}r${r} of the local cluster '$name' (infra/local/clickhouse-cluster.sh). Merged over config.xml. -->
<yandex>
    <interserver_http_host>127.0.0.1</interserver_http_host>
    <interserver_http_port>$inter</interserver_http_port>
    <!-- Four servers share a 2-core machine: small caches, no query log. -->
    <mark_cache_size>67108864</mark_cache_size>
    <uncompressed_cache_size>16777216</uncompressed_cache_size>
    <query_log remove="remove"/>
    <remote_servers>
        <$name>
$shard_xml        </$name>
    </remote_servers>
    <zookeeper>
        <node><host>127.0.0.1</host><port>$zk_port</port></node>
        <session_timeout_ms>10000</session_timeout_ms>
    </zookeeper>
    <macros>
        <cluster>$name</cluster>
        <shard>$s</shard>
        <replica>s${s}r${r}</replica>
    </macros>
    <distributed_ddl>
        <path>/clickhouse/task_queue/ddl</path>
    </distributed_ddl>
</yandex>
EOF
    done
  done
  # Per-query resources of every server (18.16 reads the background pools from the default profile; later
  # releases ignore those two there and keep their own server-level defaults).
  local pools=""
  if [[ $(clickhouse_major) -lt 21 ]]; then
    pools="            <background_pool_size>4</background_pool_size>
            <background_schedule_pool_size>4</background_schedule_pool_size>"
  fi
  cat >"$dir/config/users.xml" <<EOF
<?xml version="1.0"?>
<yandex>
    <profiles>
        <default>
            <max_threads>2</max_threads>
            <!-- Deterministic for tests: the first replica of each shard takes reads and inserts while it is up
                 (tests stop it to see the other take over). Production keeps the default, random. -->
            <load_balancing>in_order</load_balancing>
            <max_memory_usage>1000000000</max_memory_usage>
$pools
        </default>
    </profiles>
</yandex>
EOF
  cat >"$dir/cluster.json" <<EOF
{"name":"$name","zookeeperPort":$zk_port,"nodes":[$(awk -v d="$dir" '{printf "%s{\"name\":\"%s\",\"shard\":%s,\"replica\":%s,\"httpPort\":%s,\"tcpPort\":%s,\"dir\":\"%s/%s\"}", (NR>1?",":""), $1, $2, $3, $4, $5, d, $1}' "$nodes_file")]}
EOF
}

clickhouse_major() {
  local server v
  for server in clickhouse-server /usr/sbin/clickhouse-server /usr/bin/clickhouse-server; do
    command -v "$server" >/dev/null 2>&1 && break
  done
  v=$("$server" --version 2>/dev/null | grep -oE '[0-9]+\.[0-9]+' | head -n 1) || true
  echo "${v%%.*}"
}

case $cmd in
start)
  [[ -n $base ]] || dg_die "clickhouse-cluster.sh start: --base-port is required"
  ((shards >= 1 && replicas >= 1 && shards * replicas <= 9)) || dg_die "clickhouse-cluster.sh: 1–9 servers"
  mkdir -p "$dir"
  "$here/zookeeper.sh" start --dir "$dir/zookeeper" --port "$base"
  render_configs "$base"
  while read -r n s r http tcp inter; do
    start_node "$n" "$s" "$r" "$http" "$tcp" "$inter"
  done <"$nodes_file"
  dg_log "  clickhouse cluster '$name' up: $shards shards × $replicas replicas (HTTP $((base + 11))–$((base + 10 + shards * replicas)))"
  ;;
stop)
  if [[ -f $nodes_file ]]; then
    while read -r n _; do "$here/clickhouse.sh" stop --dir "$dir/$n"; done <"$nodes_file"
  fi
  "$here/zookeeper.sh" stop --dir "$dir/zookeeper"
  ;;
status)
  [[ -f $nodes_file ]] || { echo stopped; exit 1; }
  "$here/zookeeper.sh" status --dir "$dir/zookeeper" | sed 's/^/zookeeper /'
  while read -r n _; do
    printf '%s ' "$n"
    "$here/clickhouse.sh" status --dir "$dir/$n" || true
  done <"$nodes_file"
  ;;
node-stop)
  [[ -n $node ]] || dg_die "node-stop: --node is required"
  node_line "$node" >/dev/null
  if [[ $kill == yes ]]; then
    dg_kill "$dir/$node/clickhouse.pid"
    dg_log "  $node killed"
  else
    "$here/clickhouse.sh" stop --dir "$dir/$node"
  fi
  ;;
node-start)
  [[ -n $node ]] || dg_die "node-start: --node is required"
  # shellcheck disable=SC2046
  start_node $(node_line "$node")
  ;;
*) dg_die "usage: clickhouse-cluster.sh start|stop|status|node-stop|node-start --dir DIR [...]" ;;
esac
