#!/usr/bin/env bash
# Flake hunt: the integration suites, then the e2e suites with the demo, N times each in turn, each run
# beside one busy core (a CPU burner), as a loaded CI machine would run them. Each run's log and a
# summary line (exit status, time, the failing tests) go to the output directory.
#
#   scripts/flake-hunt.sh [runs=10] [out=.flake-hunt]
#
# Run it in a worktree of its own (git worktree add): it runs the tests of the files as they are there.
set -u
cd "$(dirname "$0")/.."
runs=${1:-10}
out=${2:-.flake-hunt}
mkdir -p "$out"
sh -c 'while :; do :; done' &
burner=$!
trap 'kill $burner 2>/dev/null' EXIT
export NX_DAEMON=false CI=true
integration=@loopwright/runtime,@loopwright/informer,@loopwright/leader-election,@loopwright/at-scheduler,@loopwright/cloud-node,@loopwright/mailgun-cluster,@loopwright/testing
for i in $(seq 1 "$runs"); do
  for group in integration e2e; do
    if [ $group = integration ]; then projects=$integration; else projects=@loopwright/e2e,@loopwright/scripts; fi
    started=$(date +%s)
    pnpm -s nx run-many -t test --projects=$projects --skip-nx-cache --output-style=static >"$out/$i-$group.log" 2>&1 </dev/null
    rc=$?
    failed=$(sed 's/\x1b\[[0-9;]*m//g' "$out/$i-$group.log" | grep -E '^✖' | grep -v 'failing tests' | sort -u | head -10 | tr '\n' '|')
    echo "$(date +%T) run $i $group exit $rc $(($(date +%s) - started)) s $failed" | tee -a "$out/summary.txt"
  done
done
