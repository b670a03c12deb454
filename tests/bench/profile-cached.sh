#!/usr/bin/env bash
# Issue 15 profile: where a cached cold read spends the daemon's CPU. The 2,000-file dataset is
# read once through a mount to fill the cache; then the daemon is remounted under Java Flight
# Recorder (settings=profile), the page cache dropped, and one pass read with THREADS threads. The
# hot methods and the allocation by class go to stdout (JDK 21+'s `jfr view`, Temurin 25 here).
# Usage: tests/bench/profile-cached.sh [WORKDIR] [THREADS]   (root; HINTFS_JAR picks the build)
set -euo pipefail
source "$(dirname "$(readlink -f "$0")")/lib.sh"
work=${1:-/tmp/hintfs-profile}
threads=${2:-8}
make_dataset "$work/src"
compile_reader "$work"
mkdir -p "$work/mnt"
unmount_if_mounted "$work/mnt"
trap 'unmount_if_mounted "$work/mnt"' EXIT
rm -rf "$work/cache" "$work/rec.jfr"
"$hintfs" mount "$work/src" "$work/mnt" --cache-dir "$work/cache" >/dev/null
run "$work/mnt" 8 0 >/dev/null
"$hintfs" unmount "$work/mnt"
HINTFS_JAVA_OPTS="-XX:StartFlightRecording=filename=$work/rec.jfr,settings=profile,dumponexit=true" \
  "$hintfs" mount "$work/src" "$work/mnt" --cache-dir "$work/cache" >/dev/null
drop
since=$(date -u +%Y-%m-%dT%H:%M:%S)
echo "files/s: $(run "$work/mnt" "$threads" 1)"
"$hintfs" status --json "$work/mnt" | grep -E '"(misses|open_hits|open_misses|disk_hits|ram_hits)"'
"$hintfs" unmount "$work/mnt"
sleep 1
for ev in jdk.ExecutionSample jdk.NativeMethodSample; do
  echo "$ev:"
  jfr print --json --events "$ev" --stack-depth 64 "$work/rec.jfr" |
    /usr/bin/python3 "$root/tests/bench/jfr_top.py" 12 "$since"
done
