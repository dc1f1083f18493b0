#!/usr/bin/env bash
# The history benchmark's stack, shared by bench/history and bench/client (sourced by their run.sh): its own
# ClickHouse and Redis (infra/local, data under $DIR), the benchmark data set (generated once and kept: $ROWS rows,
# 12 tickers from 7 March to 20 November 2026, merged so every run reads the same layout; regenerated when
# FRESH=yes or the recipe changed), and a history service process as deployed. Sets CLICKHOUSE_URL, REDIS_URL, DB,
# KEY and HISTORY_URL; `bench_stack_stop` stops everything it started (the data stays).
#
# Expects ROOT and DEV, and infra/local/lib.sh sourced. Sourcing it sets the defaults below, which a run.sh's
# arguments may change before `bench_stack_start`.
#
# CLUSTER=<name> (bench/history's --cluster): the same on a local ClickHouse cluster (infra/local/clickhouse-cluster.sh:
# 2 shards × 2 replicas and a ZooKeeper, ports from DG_BENCH_CLUSTER_PORT, 17300) in cluster mode
# (CLICKHOUSE_CLUSTER): the data set goes in through the Distributed tables, the service and the ClickHouse anchor
# read through them on the first server. Sets CH_PIDFILE, the pid file of the ClickHouse the anchor talks to.

CH_HTTP=${DG_BENCH_CLICKHOUSE_HTTP_PORT:-17223}
CH_TCP=${DG_BENCH_CLICKHOUSE_TCP_PORT:-17910}
REDIS_PORT=${DG_BENCH_REDIS_PORT:-17389}
HISTORY_PORT=${DG_BENCH_HISTORY_PORT:-17083}
CLUSTER_PORT=${DG_BENCH_CLUSTER_PORT:-17300}
DIR=$DEV/bench/history
ROWS=50000000
FRESH=no
CLUSTER=

bench_stack_stop() {
  dg_stop "$DIR/history.pid" 20 || true
  "$ROOT/infra/local/redis.sh" stop --dir "$DIR/redis" || true
  if [[ -n $CLUSTER ]]; then
    "$ROOT/infra/local/clickhouse-cluster.sh" stop --dir "$DIR/cluster" || true
  else
    "$ROOT/infra/local/clickhouse.sh" stop --dir "$DIR/clickhouse" || true
  fi
}

bench_stack_start() {
  for f in services/history/dist/main.js packages/history-tools/dist/cli/seed.js packages/auth/dist/cli.js \
    packages/history-store/dist/index.js; do
    [[ -f $ROOT/$f ]] || dg_die "$f is missing: build first (./dev bench builds; or pnpm build)"
  done

  REDIS_URL=redis://127.0.0.1:$REDIS_PORT
  DB=bench
  if [[ -n $CLUSTER ]]; then
    DIR=$DEV/bench/history-cluster
    CLICKHOUSE_URL=http://127.0.0.1:$((CLUSTER_PORT + 11))
    CH_PIDFILE=$DIR/cluster/s1r1/clickhouse.pid
  else
    CLICKHOUSE_URL=http://127.0.0.1:$CH_HTTP
    CH_PIDFILE=$DIR/clickhouse/clickhouse.pid
  fi
  mkdir -p "$DIR"

  if [[ -n $CLUSTER ]]; then
    dg_log "==> a ClickHouse cluster (2 shards × 2 replicas, ports from $CLUSTER_PORT) and Redis ($REDIS_PORT)"
    "$ROOT/infra/local/clickhouse-cluster.sh" start --dir "$DIR/cluster" --base-port "$CLUSTER_PORT" --name "$CLUSTER"
  else
    dg_log "==> ClickHouse and Redis for the benchmark (ports $CH_HTTP, $REDIS_PORT)"
    "$ROOT/infra/local/clickhouse.sh" start --dir "$DIR/clickhouse" --http-port "$CH_HTTP" --tcp-port "$CH_TCP"
  fi
  "$ROOT/infra/local/redis.sh" start --dir "$DIR/redis" --port "$REDIS_PORT"

  dataset() {
    CLICKHOUSE_URL=$CLICKHOUSE_URL CLICKHOUSE_DATABASE=$DB CLICKHOUSE_CLUSTER=$CLUSTER \
      CLICKHOUSE_CLUSTER_NODES=${CLUSTER:+$DIR/cluster/nodes} \
      node --disable-warning=ExperimentalWarning "$ROOT/bench/history/dataset.mts" "$@"
  }

  # generator=2: the generator draws from service-kit's Rng since the PRNG was unified; generator=3: rows carry
  # received_ts (migration 2); generator=4: the generator writes trades (migration 3), which take sequence numbers
  # from the deltas. A set made before is regenerated.
  DATASET="rows=$ROWS seed=bench generator=4 from=2026-03-07T00:00:00Z to=2026-11-20T00:00:00Z tickers=4/exchange"
  have=$(dataset exists 2>/dev/null || echo 0)
  if [[ $FRESH == yes || ! -f $DIR/dataset || $(cat "$DIR/dataset") != "$DATASET" || $have == 0 ]]; then
    dg_log "==> generating the data set ($DATASET)"
    dataset drop
    rm -f "$DIR/dataset"
    CLICKHOUSE_URL=$CLICKHOUSE_URL CLICKHOUSE_DATABASE=$DB CLICKHOUSE_CLUSTER=$CLUSTER \
      node "$ROOT/packages/history-tools/dist/cli/seed.js" \
      --from 2026-03-07T00:00:00Z --to 2026-11-20T00:00:00Z --tickers-per-exchange 4 --rows "$ROWS" --seed bench
    dg_log "==> merging each table (snapshots, deltas, trades) into one part per month (OPTIMIZE … FINAL), so every run reads the same layout"
    dataset optimize
    echo "$DATASET" >"$DIR/dataset"
  else
    dg_log "==> reusing the data set in $DIR ($DATASET; --fresh regenerates)"
  fi

  # Let background merges settle so runs compare like with like (at most 10 minutes).
  for ((i = 0; i < 600; i++)); do
    [[ $(dataset merges) == 0 ]] && break
    ((i % 30 == 0)) && dg_log "  waiting for merges to finish"
    sleep 1
  done

  # As deployed (infra/k8s/base/history/config.env): 4 queries at ClickHouse at once; CLICKHOUSE_QUERY_CONCURRENCY
  # in the environment overrides it.
  dg_log "==> history service on port $HISTORY_PORT"
  # A service left on the port (another run's, or a crashed one's) would answer in this one's place.
  if dg_port_busy "$HISTORY_PORT"; then
    dg_die "port $HISTORY_PORT is in use (a history service of another run?): stop it, or set DG_BENCH_HISTORY_PORT"
  fi
  KEY=$(REDIS_URL=$REDIS_URL node "$ROOT/packages/auth/dist/cli.js" create --name bench --requests-per-minute 100000000 | tail -n 1)
  # As the image runs it (services/history/Dockerfile): on jemalloc, which returns freed pages after a second.
  local jemalloc
  jemalloc=$(find /usr/lib /usr/local/lib -name libjemalloc.so.2 -print -quit 2>/dev/null || true)
  if [[ -z $jemalloc && $EUID -eq 0 ]] && command -v apt-get >/dev/null 2>&1; then
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends libjemalloc2 >&2 || true
    jemalloc=$(find /usr/lib /usr/local/lib -name libjemalloc.so.2 -print -quit 2>/dev/null || true)
  fi
  if [[ -n $jemalloc ]]; then
    # The image's own settings, read from its Dockerfile (one place).
    jemalloc="LD_PRELOAD=$jemalloc $(grep -Eo 'MALLOC_CONF=[^ ]+' "$ROOT/services/history/Dockerfile")"
  else
    dg_log "warning: libjemalloc2 is not installed; the service runs on glibc's malloc, unlike its image (RSS higher)"
    jemalloc="MALLOC_ARENA_MAX=2"
  fi
  dg_spawn "$DIR/history.pid" "$DIR/history.log" "services/history/dist/main.js" env \
    CLICKHOUSE_URL="$CLICKHOUSE_URL" CLICKHOUSE_DATABASE=$DB CLICKHOUSE_CLUSTER=$CLUSTER REDIS_URL="$REDIS_URL" \
    HISTORY_PORT="$HISTORY_PORT" \
    LOG_LEVEL=warn ACCESS_LOG=false MAX_LIMIT=1000000 QUERY_TIMEOUT_MS=60000 $jemalloc \
    CLICKHOUSE_QUERY_CONCURRENCY="${CLICKHOUSE_QUERY_CONCURRENCY:-4}" ${DG_BENCH_SERVICE_ENV:-} \
    node --max-semi-space-size=4 ${DG_BENCH_NODE_FLAGS:-} "$ROOT/services/history/dist/main.js"
  dg_wait_http "http://127.0.0.1:$HISTORY_PORT/ready" 60 "$DIR/history.pid" || {
    tail -n 30 "$DIR/history.log" >&2
    dg_die "the history service did not become ready"
  }
  HISTORY_URL=http://127.0.0.1:$HISTORY_PORT
}
