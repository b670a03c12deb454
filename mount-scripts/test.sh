#!/usr/bin/env bash
# The whole test suite: unit and property tests, real-mount integration tests through /dev/fuse,
# and the PyTorch client tests. What CI runs (.ci/run).
set -euo pipefail
root=$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/.." && pwd)
"$root/mount-scripts/setup.sh" --no-build
cd "$root"
# Debian's Maven 3.8 writes colour resets (ESC[0m) even with -B into a pipe or a file, and no
# jansi or style.color setting stops it: when the output is not a terminal, they are filtered out
# (pipefail keeps Maven's exit status).
if [[ -t 1 ]]; then
  exec mvn -B verify "$@"
fi
mvn -B verify "$@" 2>&1 | sed -u $'s/\e\\[[0-9;]*m//g'
