#!/usr/bin/env bash
# The production bundle of one controller: exactly what its image ships. packages/<controller>/Dockerfile
# runs this in its build stage and copies the result to /app; e2e/src/bundle.test.ts runs it to prove
# that the bundle starts with Node alone. esbuild builds the controller and everything it imports into
# dist/main.js, next to a package.json (name and version for --version) and the bundled packages'
# licenses: no node_modules. scripts/bundle.ts says how and why.
#
#   scripts/bundle.sh <controller> <outdir>      e.g. scripts/bundle.sh at-scheduler /tmp/at-scheduler
#
# Needs an installed workspace (pnpm install); <outdir> must not exist or be empty.
set -euo pipefail

if [ $# -ne 2 ]; then
  echo "usage: $0 <controller> <outdir>" >&2
  exit 2
fi
controller=$1
out=$(realpath -m -- "$2")
cd "$(dirname "$0")/.."
if [ ! -f "packages/$controller/src/main.ts" ]; then
  echo "$0: packages/$controller is not a controller (no src/main.ts)" >&2
  exit 2
fi

# pnpm puts the workspace's Node 24 first on PATH (the system Node may be older).
exec pnpm exec node scripts/bundle.ts "$controller" "$out"
