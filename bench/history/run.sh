#!/usr/bin/env bash
# History service benchmark: `./dev bench history [--rows N] [--fresh] [--quick] [--only throughput|latency|memory]
# [--cluster]`.
#
# --cluster: the same on a local ClickHouse cluster (infra/local/clickhouse-cluster.sh: 2 shards × 2 replicas and a
# ZooKeeper, ports from DG_BENCH_CLUSTER_PORT, 17300) in cluster mode (CLICKHOUSE_CLUSTER): the data set goes in
# through the Distributed tables, the service and the ClickHouse anchor read through them on the first server.
#
# Starts its own ClickHouse and Redis (infra/local, data under $DG_DEV_DIR/bench/history) and a history service
# process, generates the data set once (50M rows by default; kept for later runs unless --fresh), then runs
# bench/history/bench.mts and prints the figures (Markdown, for docs/benchmarks.md). Everything it started is
# stopped on exit; the data stays unless --fresh is given next time or the folder is removed.
#
# Ports (override when they collide): DG_BENCH_CLICKHOUSE_HTTP_PORT (17223), DG_BENCH_CLICKHOUSE_TCP_PORT (17910),
# DG_BENCH_REDIS_PORT (17389), DG_BENCH_HISTORY_PORT (17083). Diagnosis: DG_BENCH_NODE_FLAGS are added to the
# service's node flags, DG_BENCH_GEN_FLAGS to the load generator's (e.g. --trace-gc).
set -euo pipefail

ROOT=${DG_ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
DEV=${DG_DEV_DIR:-$ROOT/.dev}
# shellcheck source=../../infra/local/lib.sh
source "$ROOT/infra/local/lib.sh"

CH_HTTP=${DG_BENCH_CLICKHOUSE_HTTP_PORT:-17223}
CH_TCP=${DG_BENCH_CLICKHOUSE_TCP_PORT:-17910}
REDIS_PORT=${DG_BENCH_REDIS_PORT:-17389}
HISTORY_PORT=${DG_BENCH_HISTORY_PORT:-17083}
CLUSTER_PORT=${DG_BENCH_CLUSTER_PORT:-17300}
DIR=$DEV/bench/history
ROWS=50000000
FRESH=no
QUICK=0
ONLY=
CLUSTER=

while [[ $# -gt 0 ]]; do
  case $1 in
  --rows) ROWS=$2; shift 2 ;;
  --fresh) FRESH=yes; shift ;;
  --quick) QUICK=1; shift ;;
  --only) ONLY=$2; shift 2 ;;
  --cluster) CLUSTER=depthgate; shift ;;
  -h | --help) sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
  *) dg_die "bench history: unknown argument $1 (--rows N, --fresh, --quick, --only throughput|latency|memory, --cluster)" ;;
  esac
done
[[ $ROWS =~ ^[1-9][0-9]*$ ]] || dg_die "--rows must be a positive integer"

for f in services/history/dist/main.js services/history/dist/cli/seed.js packages/auth/dist/cli.js; do
  [[ -f $ROOT/$f ]] || dg_die "$f is missing: build first (./dev bench builds; or pnpm build)"
done

REDIS_URL=redis://127.0.0.1:$REDIS_PORT
DB=bench
if [[ -n $CLUSTER ]]; then
  DIR=$DEV/bench/history-cluster
  CLICKHOUSE_URL=http://127.0.0.1:$((CLUSTER_PORT + 11))
  CH_PIDFILE=$DIR/cluster/s1r1/clickhouse.pid
  ON_CLUSTER=" ON CLUSTER $CLUSTER"
else
  CLICKHOUSE_URL=http://127.0.0.1:$CH_HTTP
  CH_PIDFILE=$DIR/clickhouse/clickhouse.pid
  ON_CLUSTER=
fi
mkdir -p "$DIR"

cleanup() {
  dg_stop "$DIR/history.pid" 20 || true
  "$ROOT/infra/local/redis.sh" stop --dir "$DIR/redis" || true
  if [[ -n $CLUSTER ]]; then
    "$ROOT/infra/local/clickhouse-cluster.sh" stop --dir "$DIR/cluster" || true
  else
    "$ROOT/infra/local/clickhouse.sh" stop --dir "$DIR/clickhouse" || true
  fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

if [[ -n $CLUSTER ]]; then
  dg_log "==> a ClickHouse cluster (2 shards × 2 replicas, ports from $CLUSTER_PORT) and Redis ($REDIS_PORT)"
  "$ROOT/infra/local/clickhouse-cluster.sh" start --dir "$DIR/cluster" --base-port "$CLUSTER_PORT" --name "$CLUSTER"
else
  dg_log "==> ClickHouse and Redis for the benchmark (ports $CH_HTTP, $REDIS_PORT)"
  "$ROOT/infra/local/clickhouse.sh" start --dir "$DIR/clickhouse" --http-port "$CH_HTTP" --tcp-port "$CH_TCP"
fi
"$ROOT/infra/local/redis.sh" start --dir "$DIR/redis" --port "$REDIS_PORT"

chq() { curl -fsS --data-binary "$1" "$CLICKHOUSE_URL/"; }

# generator=2: the generator draws from service-kit's Rng since the PRNG was unified; a set made before is regenerated.
DATASET="rows=$ROWS seed=bench generator=2 from=2026-03-07T00:00:00Z to=2026-11-20T00:00:00Z tickers=4/exchange"
have=$(chq "SELECT count() FROM system.tables WHERE database = '$DB' AND name = 'deltas'" 2>/dev/null || echo 0)
if [[ $FRESH == yes || ! -f $DIR/dataset || $(cat "$DIR/dataset") != "$DATASET" || $have == 0 ]]; then
  dg_log "==> generating the data set ($DATASET)"
  chq "DROP DATABASE IF EXISTS $DB$ON_CLUSTER" >/dev/null
  rm -f "$DIR/dataset"
  CLICKHOUSE_URL=$CLICKHOUSE_URL CLICKHOUSE_DATABASE=$DB CLICKHOUSE_CLUSTER=$CLUSTER \
    node "$ROOT/services/history/dist/cli/seed.js" \
    --from 2026-03-07T00:00:00Z --to 2026-11-20T00:00:00Z --tickers-per-exchange 4 --rows "$ROWS" --seed bench
  dg_log "==> merging each table into one part per month (OPTIMIZE … FINAL), so every run reads the same layout"
  if [[ -n $CLUSTER ]]; then
    # Each shard's replicated table, once per shard (its replicas take the merged parts), then every replica in step.
    while read -r node shard replica http _; do
      if [[ $replica == 1 ]]; then
        for t in deltas snapshots; do
          curl -fsS --data-binary "OPTIMIZE TABLE $DB.${t}_local FINAL" "http://127.0.0.1:$http/" >/dev/null
        done
      fi
    done <"$DIR/cluster/nodes"
    while read -r node _ _ http _; do
      for t in deltas snapshots; do
        curl -fsS --data-binary "SYSTEM SYNC REPLICA $DB.${t}_local" "http://127.0.0.1:$http/" >/dev/null
      done
    done <"$DIR/cluster/nodes"
  else
    chq "OPTIMIZE TABLE $DB.deltas FINAL" >/dev/null
    chq "OPTIMIZE TABLE $DB.snapshots FINAL" >/dev/null
  fi
  echo "$DATASET" >"$DIR/dataset"
else
  dg_log "==> reusing the data set in $DIR ($DATASET; --fresh regenerates)"
fi

# Let background merges settle so runs compare like with like (at most 10 minutes).
for ((i = 0; i < 600; i++)); do
  [[ $(chq "SELECT count() FROM system.merges WHERE database = '$DB'") == 0 ]] && break
  ((i % 30 == 0)) && dg_log "  waiting for merges to finish ($(chq "SELECT count() FROM system.parts WHERE database = '$DB' AND active") parts)"
  sleep 1
done

# As deployed (infra/k8s/base/history/config.env): 4 queries at ClickHouse at once; CLICKHOUSE_QUERY_CONCURRENCY
# in the environment overrides it.
dg_log "==> history service on port $HISTORY_PORT"
KEY=$(REDIS_URL=$REDIS_URL node "$ROOT/packages/auth/dist/cli.js" create --name bench --requests-per-minute 100000000 | tail -n 1)
dg_spawn "$DIR/history.pid" "$DIR/history.log" "services/history/dist/main.js" env \
  CLICKHOUSE_URL="$CLICKHOUSE_URL" CLICKHOUSE_DATABASE=$DB CLICKHOUSE_CLUSTER=$CLUSTER REDIS_URL="$REDIS_URL" \
  HISTORY_PORT="$HISTORY_PORT" \
  LOG_LEVEL=warn ACCESS_LOG=false MAX_LIMIT=1000000 QUERY_TIMEOUT_MS=60000 MALLOC_ARENA_MAX=2 \
  CLICKHOUSE_QUERY_CONCURRENCY="${CLICKHOUSE_QUERY_CONCURRENCY:-4}" \
  node --max-semi-space-size=4 ${DG_BENCH_NODE_FLAGS:-} "$ROOT/services/history/dist/main.js"
dg_wait_http "http://127.0.0.1:$HISTORY_PORT/ready" 60 "$DIR/history.pid" || {
  tail -n 30 "$DIR/history.log" >&2
  dg_die "the history service did not become ready"
}

dg_log "==> measuring (figures on stdout)"
HISTORY_URL=http://127.0.0.1:$HISTORY_PORT API_KEY=$KEY CLICKHOUSE_URL=$CLICKHOUSE_URL CLICKHOUSE_DATABASE=$DB \
  CLICKHOUSE_CLUSTER=$CLUSTER \
  SERVICE_PID=$(dg_pid_of "$DIR/history.pid") CLICKHOUSE_PID=$(dg_pid_of "$CH_PIDFILE") \
  BENCH_QUICK=$QUICK BENCH_ONLY=$ONLY \
  node --disable-warning=ExperimentalWarning ${DG_BENCH_GEN_FLAGS:-} "$ROOT/bench/history/bench.mts"
