#!/usr/bin/env bash
# Flake hunt: `pnpm test` (everything CI runs: typecheck, lint, unit, integration and e2e suites, side by
# side as Nx schedules them) N times with Nx's cache skipped, each run beside one busy core (a CPU
# burner). Each run's log and a summary line (exit status, time, the failing tests) go to the output
# directory.
#
#   scripts/flake-hunt.sh [runs=10] [out=.flake-hunt]
#
# Run it in a worktree of its own (git worktree add): it runs the tests of the files as they are there,
# and the real node it starts is one per machine. An earlier version ran the integration and the e2e
# suites in turn, each alone: it passed where CI, which runs them together, failed.
set -u
cd "$(dirname "$0")/.."
runs=${1:-10}
out=${2:-.flake-hunt}
mkdir -p "$out"
sh -c 'while :; do :; done' &
burner=$!
trap 'kill $burner 2>/dev/null' EXIT
export CI=true NX_SKIP_NX_CACHE=true NX_DAEMON=false
for i in $(seq 1 "$runs"); do
  started=$(date +%s)
  pnpm test >"$out/$i.log" 2>&1 </dev/null
  rc=$?
  failed=$(sed 's/\x1b\[[0-9;]*m//g' "$out/$i.log" | grep -E '^✖' | grep -v 'failing tests' | sort -u | head -10 | tr '\n' '|')
  echo "$(date +%T) run $i exit $rc $(($(date +%s) - started)) s $failed" | tee -a "$out/summary.txt"
done
