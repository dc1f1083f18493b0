#!/usr/bin/env bash
# Start, stop or check a local ZooKeeper (Debian's `zookeeper` package, 3.8) as an unprivileged process: one
# standalone server, for the local ClickHouse cluster (infra/local/clickhouse-cluster.sh).
#   infra/local/zookeeper.sh start  --dir DIR --port PORT
#   infra/local/zookeeper.sh stop   --dir DIR
#   infra/local/zookeeper.sh status --dir DIR
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=lib.sh
source "$here/lib.sh"

cmd=${1:-}
shift || true
dir="" port=""
while [[ $# -gt 0 ]]; do
  case $1 in
  --dir) dir=$2; shift 2 ;;
  --port) port=$2; shift 2 ;;
  *) dg_die "zookeeper.sh: unknown argument $1" ;;
  esac
done
[[ -n $dir ]] || dg_die "zookeeper.sh: --dir is required"
pidfile=$dir/zookeeper.pid
ZK_JAR=${DG_ZOOKEEPER_JAR:-/usr/share/java/zookeeper.jar}

# Serving requests: `srvr` over the client port names the server's mode (the four-letter word is allowed in our
# zoo.cfg). `ruok` is not enough: it answers while a restarted server still loads its data, and ClickHouse 18.16 exits
# at start when ZooKeeper refuses the tables it has.
zk_ok() {
  local answer
  answer=$(timeout 2 bash -c 'exec 3<>"/dev/tcp/127.0.0.1/$1"; printf srvr >&3; cat <&3' _ "$1" 2>/dev/null) || return 1
  [[ $answer == *"Mode: standalone"* ]]
}

case $cmd in
start)
  [[ -n $port ]] || dg_die "zookeeper.sh start: --port is required"
  [[ -f $ZK_JAR ]] || dg_die "ZooKeeper is not installed (Debian: apt-get install zookeeper)"
  command -v java >/dev/null 2>&1 || dg_die "java is missing (Debian: apt-get install default-jre-headless)"
  if dg_alive "$pidfile"; then
    dg_log "  zookeeper already running (pid $(dg_pid_of "$pidfile"), port $port)"
    exit 0
  fi
  dg_port_busy "$port" && dg_die "port $port is taken by another process; choose another ZooKeeper port"
  mkdir -p "$dir/data"
  sed -e "s#@PORT@#$port#g" -e "s#@DATA_DIR@#$dir/data#g" "$here/zookeeper/zoo.cfg" >"$dir/zoo.cfg"
  # The jar's manifest names its dependencies; slf4j-simple (Debian's libslf4j-java) makes its log readable.
  classpath=$ZK_JAR
  [[ -f /usr/share/java/slf4j-simple.jar ]] && classpath+=:/usr/share/java/slf4j-simple.jar
  dg_unpriv_prepare "$dir"
  # A small heap and the serial collector: a test ZooKeeper holds a few thousand znodes.
  dg_spawn "$pidfile" "$dir/zookeeper.log" "$dir/zoo.cfg" "${DG_UNPRIV_PREFIX[@]}" java -Xms32m -Xmx128m -Xss512k \
    -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -Dorg.slf4j.simpleLogger.defaultLogLevel=warn \
    -Dzookeeper.admin.enableServer=false -cp "$classpath" \
    org.apache.zookeeper.server.ZooKeeperServerMain "$dir/zoo.cfg"
  for ((i = 0; i < 300; i++)); do
    if zk_ok "$port"; then
      dg_log "  zookeeper up on 127.0.0.1:$port"
      exit 0
    fi
    dg_alive "$pidfile" || break
    sleep 0.1
  done
  tail -n 30 "$dir/zookeeper.log" >&2 || true
  dg_stop "$pidfile" 5
  dg_die "zookeeper did not start on port $port"
  ;;
stop) dg_stop "$pidfile" 10 ;;
status)
  if dg_alive "$pidfile"; then echo "running pid=$(dg_pid_of "$pidfile")"; else
    echo stopped
    exit 1
  fi
  ;;
*) dg_die "usage: zookeeper.sh start|stop|status --dir DIR [--port PORT]" ;;
esac
