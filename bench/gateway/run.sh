#!/usr/bin/env bash
# ./dev bench gateway [--seconds N]: see bench/gateway/run.mjs. Needs nginx and wrk (Debian: nginx-light, wrk).
# ./dev bench gateway --ab A B [...]: two gateway configurations or builds side by side, see bench/gateway/ab.mjs.
set -euo pipefail
cd "$(dirname "$0")/../.."
missing=()
command -v nginx >/dev/null 2>&1 || missing+=(nginx-light)
command -v wrk >/dev/null 2>&1 || missing+=(wrk)
if ((${#missing[@]})); then
  if [[ $EUID -eq 0 ]] && command -v apt-get >/dev/null 2>&1; then
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
  else
    echo "bench/gateway: install ${missing[*]} first" >&2
    exit 1
  fi
fi
for arg in "$@"; do
  [[ $arg == --ab ]] && exec node bench/gateway/ab.mjs "$@"
done
exec node bench/gateway/run.mjs "$@"
