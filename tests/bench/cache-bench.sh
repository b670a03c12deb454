#!/usr/bin/env bash
# Cached small files: the dataset fully cached in LMDB, read through the mount vs the source
# directory on local disk, and vs an in-memory FUSE filesystem (the same daemon serving every file
# from the heap: --preload-into-heap), 1 and 8 threads.
#   cold: page cache dropped (LMDB's pages and the source's alike), then one pass; the mount's
#         daemon has just started (JIT and class loading included)
#   warm: a second pass right after
#   cold again: the page cache dropped once more, the same daemon (a long-running mount reading a
#         dataset larger than RAM: its steady state)
# The cached mount is remounted before each cold pass, so its RAM tier is empty too: every byte
# comes from data.mdb. Median of REPS runs; a Markdown table on stdout.
# Usage: tests/bench/cache-bench.sh [WORKDIR] (root: it writes /proc/sys/vm/drop_caches)
set -euo pipefail
source "$(dirname "$(readlink -f "$0")")/lib.sh"
work=${1:-/tmp/hintfs-bench}
reps=${REPS:-3}
make_dataset "$work/src"
compile_reader "$work"
mkdir -p "$work/mnt" "$work/mem"
unmount_if_mounted "$work/mnt"
unmount_if_mounted "$work/mem"
cleanup() { unmount_if_mounted "$work/mnt"; unmount_if_mounted "$work/mem"; }
trap cleanup EXIT
rm -rf "$work/cache"
"$hintfs" mount "$work/src" "$work/mnt" --cache-dir "$work/cache" >/dev/null
run "$work/mnt" 8 0 >/dev/null # fill the cache
"$hintfs" unmount "$work/mnt"
"$hintfs" mount "$work/src" "$work/mem" --preload-into-heap >/dev/null

echo "| threads | pass | source dir files/s | in-memory FUSE files/s | hintfs cached files/s | hintfs/source | hintfs/in-memory |"
echo "| --- | --- | --- | --- | --- | --- | --- |"
for threads in 1 8; do
  sc=() ec=() hc=() sw=() ew=() hw=() sa=() ea=() ha=()
  for ((r = 0; r < reps; r++)); do
    seed=$((r + 1)) wseed=$((r + 101))
    aseed=$((r + 201))
    drop; sc+=("$(run "$work/src" "$threads" "$seed")"); sw+=("$(run "$work/src" "$threads" "$wseed")")
    drop; sa+=("$(run "$work/src" "$threads" "$aseed")")
    drop; ec+=("$(run "$work/mem" "$threads" "$seed")"); ew+=("$(run "$work/mem" "$threads" "$wseed")")
    drop; ea+=("$(run "$work/mem" "$threads" "$aseed")")
    "$hintfs" mount "$work/src" "$work/mnt" --cache-dir "$work/cache" >/dev/null
    drop; hc+=("$(run "$work/mnt" "$threads" "$seed")"); hw+=("$(run "$work/mnt" "$threads" "$wseed")")
    drop; ha+=("$(run "$work/mnt" "$threads" "$aseed")")
    misses=$("$hintfs" status --json "$work/mnt" | grep '"misses"' | tr -dc 0-9)
    [[ $misses == 0 ]] || { echo "cache-bench: $misses misses: the cache was not full" >&2; exit 1; }
    "$hintfs" unmount "$work/mnt"
  done
  for pass in cold warm "cold again"; do
    if [[ $pass == cold ]]; then s=$(median "${sc[@]}"); e=$(median "${ec[@]}"); h=$(median "${hc[@]}")
    elif [[ $pass == warm ]]; then s=$(median "${sw[@]}"); e=$(median "${ew[@]}"); h=$(median "${hw[@]}")
    else s=$(median "${sa[@]}"); e=$(median "${ea[@]}"); h=$(median "${ha[@]}"); fi
    printf '| %s | %s | %.0f | %.0f | %.0f | %.2f | %.2f |\n' "$threads" "$pass" "$s" "$e" "$h" \
      "$(ratio "$h" "$s")" "$(ratio "$h" "$e")"
  done
done
