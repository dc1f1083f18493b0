#!/usr/bin/env bash
# Client benchmark: `./dev bench client [--rounds N] [--fresh]`.
#
# Replays a day of the busiest ticker of the history benchmark's data set with @depthgate/client (the NDJSON
# stream parsed and every delta applied to an OrderBook) and prints deltas/s beside the anchor measured in the same
# run: the raw parse of the same NDJSON bytes (split into lines, JSON.parse each). Uses the history benchmark's stack
# and data set (bench/history/stack.sh: generated once under $DG_DEV_DIR/bench/history, 50M rows), so the two
# benchmarks must not run at the same time.
#
# Ports (override when they collide): DG_BENCH_CLICKHOUSE_HTTP_PORT (17223), DG_BENCH_CLICKHOUSE_TCP_PORT (17910),
# DG_BENCH_REDIS_PORT (17389), DG_BENCH_HISTORY_PORT (17083).
set -euo pipefail

ROOT=${DG_ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
DEV=${DG_DEV_DIR:-$ROOT/.dev}
# shellcheck source=../../infra/local/lib.sh
source "$ROOT/infra/local/lib.sh"
# shellcheck source=../history/stack.sh
source "$ROOT/bench/history/stack.sh"
ROUNDS=15

while [[ $# -gt 0 ]]; do
  case $1 in
  --rounds) ROUNDS=$2; shift 2 ;;
  --fresh) FRESH=yes; shift ;;
  -h | --help) sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
  *) dg_die "bench client: unknown argument $1 (--rounds N, --fresh)" ;;
  esac
done
[[ $ROUNDS =~ ^[1-9][0-9]*$ ]] || dg_die "--rounds must be a positive integer"
[[ -f $ROOT/packages/client/dist/esm/index.js ]] || dg_die "packages/client is not built: pnpm build (./dev bench builds)"

trap bench_stack_stop EXIT
trap 'exit 130' INT TERM
bench_stack_start

dg_log "==> measuring (figures on stdout)"
HISTORY_URL=$HISTORY_URL API_KEY=$KEY BENCH_ROUNDS=$ROUNDS node "$ROOT/bench/client/bench.mts"
