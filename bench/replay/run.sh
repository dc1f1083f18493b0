#!/usr/bin/env bash
# ./dev bench replay [--venue kalshi] [--quick] [--replays N] [--pacing-seconds N] [--memory-sockets N] [--fresh]
#                    [--clickhouse URL --redis URL] [--keep]: see bench/replay/run.mjs. Needs a build (./dev bench builds).
set -euo pipefail
cd "$(dirname "$0")/../.."
exec node bench/replay/run.mjs "$@"
