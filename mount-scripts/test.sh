#!/usr/bin/env bash
# The whole test suite: unit and property tests, real-mount integration tests through /dev/fuse,
# and the PyTorch client tests. What CI runs (.ci/run).
set -euo pipefail
# Maven 3.8's console library writes colour resets (ESC[0m) even with -B into a pipe or a file:
# strip them when the output is not a terminal.
[[ -t 2 ]] || export MAVEN_OPTS="${MAVEN_OPTS:-} -Djansi.strip=true"
root=$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/.." && pwd)
"$root/mount-scripts/setup.sh" --no-build
cd "$root"
exec mvn -B verify "$@"
