#!/usr/bin/env bash
# The production bundle of one controller: exactly what its image ships. packages/<controller>/Dockerfile
# runs this in its build stage and copies the result to /app; e2e/src/bundle.test.ts runs it to prove
# that the bundle starts with Node alone. The bundle holds the controller's package.json and dist/, the
# workspace packages it imports (each as its package.json "files": dist/) and its production
# dependencies, nothing else.
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

# tsc -b builds the project references first (the workspace packages the controller imports) and skips
# whatever is up to date, so bundling the three controllers in a row compiles the shared packages once.
# It judges "up to date" by the build info next to tsconfig.build.json alone: a package whose dist/ was
# deleted would be skipped and bundled without its code, so such a package's build info goes first.
for info in packages/*/tsconfig.build.tsbuildinfo; do
  if [ ! -d "$(dirname "$info")/dist" ]; then rm -f "$info"; fi
done
pnpm exec tsc -b "packages/$controller/tsconfig.build.json"

# pnpm 10 deploys from the shared lockfile (the versions the workspace is tested with) only with
# inject-workspace-packages=true: set for this command alone, so every other install keeps linking the
# workspace packages (an injected copy would stop seeing edits to their sources). The deploy copies each
# workspace package the controller needs as its package.json "files" (dist/) and installs the production
# dependencies. (--legacy instead would also write stray node_modules/.bin directories into the
# workspace, pnpm/pnpm#10981.)
pnpm --filter "@loopwright/$controller" deploy --prod --config.inject-workspace-packages=true "$out"
# The lockfile the deploy writes describes the whole workspace, dev tools included: an image scanner
# reading it would report packages the bundle does not hold. node_modules/.pnpm/lock.yaml lists what it
# does hold.
rm "$out/pnpm-lock.yaml"
