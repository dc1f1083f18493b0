#!/usr/bin/env bash
# ./dev bench ws [--clients N] [--seconds N]: see bench/ws/run.mjs. Needs a build (./dev bench builds).
set -euo pipefail
cd "$(dirname "$0")/../.."
exec node bench/ws/run.mjs "$@"
