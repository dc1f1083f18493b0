#!/usr/bin/env bash
# ./dev bench recorder [--seconds N] [--warmup N] [--ups N] [--changes N] [--tickers p=N,…] [--platforms a,b] [--semi N]
#                      [--trades both|on|off]
# ./dev bench recorder --faults [--minutes N] [--fault-every S] [--stall-timeout-ms N] [--audit-ms N]
# ./dev bench recorder --book-faults [--minutes 30] [--fault-every 30] [--moments 1000] [--reconcile-ms 60000]
# ./dev bench recorder --dedup-reads [--rows 5000000] [--rounds 40] [--page-rounds 80]:
# see bench/recorder/run.mjs. Needs a build (./dev bench builds), clickhouse-server and curl.
set -euo pipefail
cd "$(dirname "$0")/../.."
command -v curl >/dev/null 2>&1 || { echo "bench/recorder: install curl first" >&2; exit 1; }
exec node bench/recorder/run.mjs "$@"
