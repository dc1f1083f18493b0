#!/usr/bin/env bash
# History service benchmark: `./dev bench history [--rows N] [--fresh] [--quick] [--only PART[,PART…]] [--cluster]`,
# PART one of throughput, latency, memory, book, reads, bulk, cursor, trades (the trades' streams, bars and Parquet).
#
# --cluster: the same on a local ClickHouse cluster (infra/local/clickhouse-cluster.sh: 2 shards × 2 replicas and a
# ZooKeeper, ports from DG_BENCH_CLUSTER_PORT, 17300) in cluster mode (CLICKHOUSE_CLUSTER): the data set goes in
# through the Distributed tables, the service and the ClickHouse anchor read through them on the first server.
#
# Starts its own ClickHouse and Redis (infra/local, data under $DG_DEV_DIR/bench/history) and a history service
# process, generates the data set once (50M rows by default; kept for later runs unless --fresh), then runs
# bench/history/bench.mts and prints the figures (Markdown, for docs/benchmarks.md). Everything it started is
# stopped on exit; the data stays unless --fresh is given next time or the folder is removed. Its ClickHouse SQL is
# @depthgate/history-store's (bench/history/dataset.mts and bench.mts import it from the package's build).
#
# Ports (override when they collide): DG_BENCH_CLICKHOUSE_HTTP_PORT (17223), DG_BENCH_CLICKHOUSE_TCP_PORT (17910),
# DG_BENCH_REDIS_PORT (17389), DG_BENCH_HISTORY_PORT (17083). Diagnosis: DG_BENCH_NODE_FLAGS are added to the
# service's node flags, DG_BENCH_GEN_FLAGS to the load generator's (e.g. --trace-gc), DG_BENCH_SERVICE_ENV
# (VAR=value …) to the service's environment only (e.g. LD_PRELOAD=… to try another malloc).
set -euo pipefail

ROOT=${DG_ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
DEV=${DG_DEV_DIR:-$ROOT/.dev}
# shellcheck source=../../infra/local/lib.sh
source "$ROOT/infra/local/lib.sh"
# shellcheck source=stack.sh
source "$ROOT/bench/history/stack.sh"
QUICK=0
ONLY=

while [[ $# -gt 0 ]]; do
  case $1 in
  --rows) ROWS=$2; shift 2 ;;
  --fresh) FRESH=yes; shift ;;
  --quick) QUICK=1; shift ;;
  --only) ONLY=$2; shift 2 ;;
  --cluster) CLUSTER=depthgate; shift ;;
  -h | --help) sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
  *) dg_die "bench history: unknown argument $1 (--rows N, --fresh, --quick, --only throughput,latency,memory,book,reads,bulk,cursor,trades, --cluster)" ;;
  esac
done
[[ $ROWS =~ ^[1-9][0-9]*$ ]] || dg_die "--rows must be a positive integer"

trap bench_stack_stop EXIT
trap 'exit 130' INT TERM
bench_stack_start

dg_log "==> measuring (figures on stdout)"
HISTORY_URL=$HISTORY_URL API_KEY=$KEY CLICKHOUSE_URL=$CLICKHOUSE_URL CLICKHOUSE_DATABASE=$DB \
  CLICKHOUSE_CLUSTER=$CLUSTER SERVICE_PID=$(dg_pid_of "$DIR/history.pid") CLICKHOUSE_PID=$(dg_pid_of "$CH_PIDFILE") \
  BENCH_QUICK=$QUICK BENCH_ONLY=$ONLY \
  node --disable-warning=ExperimentalWarning ${DG_BENCH_GEN_FLAGS:-} "$ROOT/bench/history/bench.mts"
