#!/usr/bin/env bash
# Two builds side by side on the cached read path (issue 24: "no slower"): the 2,000-file dataset
# fully cached in LMDB (a cache per build); each round, for each build in turn: a new daemon, the
# page cache dropped, a cold pass with THREADS readers, a warm pass, the page cache dropped again
# and a third pass (the same daemon: JIT warm, pages cold). Both on the same JVM, no AOT cache
# (the code is compared, not its start). SETTLE=S: seconds between the mount and the cold pass (a
# trainer's own start: Python, torch, the model), default 0. Median of REPS rounds; after/before.
# BEFORE_OPTS / AFTER_OPTS: each side's HINTFS_JAVA_OPTS (the same jar twice compares JVM flags).
# Usage: BEFORE=old.jar AFTER=new.jar tests/bench/ab-bench.sh [WORKDIR]   (root)
set -euo pipefail
source "$(dirname "$(readlink -f "$0")")/lib.sh"
work=${1:-/tmp/hintfs-ab-bench}
reps=${REPS:-5}
threads=${THREADS:-8}
settle=${SETTLE:-0}
export JAVA=${JAVA:-/usr/lib/jvm/temurin-25-jdk-amd64/bin/java} HINTFS_AOT=0
make_dataset "$work/src"
compile_reader "$work"
mkdir -p "$work/mnt"
unmount_if_mounted "$work/mnt"
trap 'unmount_if_mounted "$work/mnt"' EXIT
declare -A jar=([before]=${BEFORE:?BEFORE=jar} [after]=${AFTER:?AFTER=jar})
declare -A jopts=([before]=${BEFORE_OPTS:-} [after]=${AFTER_OPTS:-})
for b in before after; do
  if [[ ! -d $work/cache-$b ]]; then
    HINTFS_JAR=${jar[$b]} HINTFS_JAVA_OPTS=${jopts[$b]} "$hintfs" mount "$work/src" "$work/mnt" --cache-dir "$work/cache-$b" >/dev/null
    run "$work/mnt" 8 0 >/dev/null
    HINTFS_JAR=${jar[$b]} "$hintfs" unmount "$work/mnt"
  fi
done
declare -A res
for ((r = 0; r < reps; r++)); do
  for b in before after; do
    HINTFS_JAR=${jar[$b]} HINTFS_JAVA_OPTS=${jopts[$b]} "$hintfs" mount "$work/src" "$work/mnt" --cache-dir "$work/cache-$b" >/dev/null
    sleep "$settle"
    drop; res[$b,cold]+="$(run "$work/mnt" "$threads" $((r + 1))) "
    res[$b,warm]+="$(run "$work/mnt" "$threads" $((r + 101))) "
    drop; res[$b,again]+="$(run "$work/mnt" "$threads" $((r + 201))) "
    HINTFS_JAR=${jar[$b]} "$hintfs" unmount "$work/mnt"
  done
done
echo "| pass | before files/s | after files/s | after/before |"
echo "| --- | --- | --- | --- |"
for p in cold warm again; do
  # shellcheck disable=SC2086
  x=$(median ${res[before,$p]}) y=$(median ${res[after,$p]})
  printf '| %s | %.0f | %.0f | %.2f |\n' "$p" "$x" "$y" "$(ratio "$y" "$x")"
done
echo "($threads threads, median of $reps rounds, ${settle} s from mount to the cold pass, $($JAVA -version 2>&1 | head -1))"
