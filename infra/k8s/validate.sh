#!/usr/bin/env bash
# Offline validation of the Kubernetes manifests (run by `./dev test`, and on its own):
#   1. renders every overlay under infra/k8s/overlays with kustomize (`kubectl kustomize`, else `kustomize build`);
#   2. checks every rendered object with packages/k8s-check: the Kubernetes schema of its kind (kubernetes-models,
#      Kubernetes v1.36 OpenAPI, pinned in the lockfile: no network; the vendored CRDs of packages/k8s-check/crds for
#      the ClickHouse operator's resources, whose pod templates are checked as pods), unknown fields, unknown or removed kinds, and
#      the deployment policy (probes, resources, image tags, non-root, read-only root filesystem, capabilities,
#      seccomp, no host namespaces, hostPath or hostPort, no Secret data).
# Exit 0 when every overlay renders and passes; 1 otherwise, with every finding listed.
set -euo pipefail

ROOT=$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/../.." && pwd)
cd "$ROOT"

say() { printf '%s\n' "$*" >&2; }

# kustomize: kubectl's built-in (kubectl >= 1.27 embeds kustomize 5, which the overlays need), else a standalone
# kustomize binary (>= 5).
kubectl_minor() { kubectl version --client 2>/dev/null | sed -n 's/^Client Version: v1\.\([0-9]*\).*/\1/p' | head -n 1; }
if command -v kubectl >/dev/null 2>&1 && [[ $(kubectl_minor) -ge 27 ]]; then
  render() { kubectl kustomize "$1"; }
  renderer="kubectl $(kubectl version --client 2>/dev/null | sed -n 's/^Client Version: //p' | head -n 1) kustomize"
elif command -v kustomize >/dev/null 2>&1; then
  render() { kustomize build "$1"; }
  renderer="kustomize $(kustomize version 2>/dev/null | head -n 1)"
else
  say "infra/k8s/validate.sh: neither kubectl >= 1.27 nor kustomize is installed, so the manifests cannot be rendered."
  say "Install kubectl (it includes kustomize): https://kubernetes.io/docs/tasks/tools/"
  say "  Debian/Ubuntu: the pkgs.k8s.io apt repository (package kubectl; Debian's own kubernetes-client is too old);"
  say "  macOS: brew install kubectl"
  say "or a standalone kustomize: https://kubectl.docs.kubernetes.io/installation/kustomize/"
  exit 1
fi

# Node: the project-local one when ./dev installed it, else the one on PATH (>= 22.12 for the checker).
if [[ -x $ROOT/.tools/node/bin/node ]]; then export PATH="$ROOT/.tools/node/bin:$PATH"; fi
command -v node >/dev/null 2>&1 || { say "infra/k8s/validate.sh: node is missing (./dev test installs it)"; exit 1; }
tsc=$ROOT/node_modules/typescript/bin/tsc
[[ -f $tsc ]] || { say "infra/k8s/validate.sh: dependencies are not installed (run ./dev test, or pnpm install)"; exit 1; }
# Build the checker when its output is missing or older than its sources (tsc -b is a no-op when up to date).
node "$tsc" -b packages/k8s-check

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
failed=0
rendered=()
# The overlays (depthgate itself) and infra/k8s/databases (ClickHouse cluster and Redis Sentinel, for operators who
# run them in the cluster).
for dir in infra/k8s/overlays/*/ infra/k8s/databases/; do
  name=$(basename "$dir")
  if render "$dir" >"$out/$name.yaml" 2>"$out/$name.err"; then
    rendered+=("$out/$name.yaml")
    say "rendered $name: $(grep -c '^kind:' "$out/$name.yaml") objects"
  else
    say "FAILED to render overlay $name:"
    cat "$out/$name.err" >&2
    failed=1
  fi
done
((${#rendered[@]} > 0)) || { say "no overlay rendered"; exit 1; }
say "checking with packages/k8s-check (rendered by $renderer)"
node packages/k8s-check/dist/cli.js "${rendered[@]}" || failed=1
exit "$failed"
