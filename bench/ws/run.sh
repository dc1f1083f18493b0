#!/usr/bin/env bash
# ./dev bench ws [--clients N] [--seconds N]: see bench/ws/run.mjs. Needs a build (./dev bench builds).
# ./dev bench ws --silence [--stalls N] [--clients N]: silence detection, see bench/ws/silence.mjs.
set -euo pipefail
cd "$(dirname "$0")/../.."
if [[ ${1:-} == --silence ]]; then
  shift
  exec node bench/ws/silence.mjs "$@"
fi
exec node bench/ws/run.mjs "$@"
