#!/usr/bin/env bash
# The whole test suite: unit and property tests, real-mount integration tests through /dev/fuse,
# and the PyTorch client tests. What CI runs (.ci/run).
set -euo pipefail
root=$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/.." && pwd)
"$root/mount-scripts/setup.sh" --no-build
cd "$root"
exec mvn -B verify "$@"
