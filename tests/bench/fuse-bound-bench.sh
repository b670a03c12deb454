#!/usr/bin/env bash
# Issue 26: how fast the FUSE path itself lets a cold pass go on this machine, beside the cached
# mount and ext4. Each round, in this order, every pass after a drop (page cache dropped, any
# LMDB map paged out: lib.sh's drop), THREADS readers over the 2,000 files:
#   ext4:      the source directory
#   in-memory: a new daemon serving every file from its heap (--preload-into-heap: no disk cache):
#              FUSE's round trips and the daemon's code, and no page-in on the data path
#   cached:    a new daemon over the full LMDB cache: the issue's "fresh daemon, cached, cold"
# Each daemon's first pass is "fresh"; after WARM more cold passes (its JIT warm) it reads once
# more: "warm". ext4 reads again at the end of the round; each ratio is against the mean of the
# round's two ext4 passes. Medians over REPS rounds of the per-round ratios.
# What it tells: no change to the cache can take the cached mount past the in-memory one, so an
# in-memory ratio under a goal says the goal is out of reach through this FUSE path here.
# ARGS: more mount options for both daemons (e.g. ARGS=--no-detect-order).
# Usage: tests/bench/fuse-bound-bench.sh [WORKDIR] (root: it writes /proc/sys/vm/drop_caches)
set -euo pipefail
source "$(dirname "$(readlink -f "$0")")/lib.sh"
work=${1:-/tmp/hintfs-bound-bench}
reps=${REPS:-5}
threads=${THREADS:-8}
warm=${WARM:-8}
make_dataset "$work/src"
compile_reader "$work"
mkdir -p "$work/mnt"
unmount_if_mounted "$work/mnt"
trap 'unmount_if_mounted "$work/mnt"' EXIT
fill_cache "$work"

# daemon ARGS...: mounts a new daemon, prints "fresh warm" files/s, unmounts
daemon() {
  # shellcheck disable=SC2086 # ARGS: words
  "$hintfs" mount "$work/src" "$work/mnt" "$@" ${ARGS:-} >/dev/null
  local fresh w i
  drop
  fresh=$(run "$work/mnt" "$threads" 7)
  for ((i = 0; i < warm; i++)); do
    drop
    run "$work/mnt" "$threads" $((i + 20)) >/dev/null
  done
  drop
  w=$(run "$work/mnt" "$threads" 8)
  if [[ $1 == --cache-dir ]]; then
    misses=$("$hintfs" status --json "$work/mnt" | grep '"misses"' | tr -dc 0-9)
    [[ $misses == 0 ]] || { echo "fuse-bound-bench: $misses misses: the cache was not full" >&2; exit 1; }
  fi
  "$hintfs" unmount "$work/mnt"
  echo "$fresh $w"
}

mf=() mw=() cf=() cw=()
echo "round: ext4 before/after, in-memory fresh/warm, cached fresh/warm (files/s)" >&2
for ((r = 0; r < reps; r++)); do
  drop
  e1=$(run "$work/src" "$threads" $((r + 1)))
  read -r memf memw < <(daemon --preload-into-heap)
  read -r cacf cacw < <(daemon --cache-dir "$work/cache")
  drop
  e2=$(run "$work/src" "$threads" $((r + 101)))
  echo "round $r: $e1/$e2, $memf/$memw, $cacf/$cacw" >&2
  e=$(echo "($e1 + $e2) / 2" | bc -l)
  mf+=("$(ratio "$memf" "$e")") mw+=("$(ratio "$memw" "$e")")
  cf+=("$(ratio "$cacf" "$e")") cw+=("$(ratio "$cacw" "$e")")
done
echo "| daemon | fresh / ext4 | warm / ext4 |"
echo "| --- | --- | --- |"
printf '| in-memory (FUSE only) | %.2f | %.2f |\n' "$(median "${mf[@]}")" "$(median "${mw[@]}")"
printf '| cached (LMDB) | %.2f | %.2f |\n' "$(median "${cf[@]}")" "$(median "${cw[@]}")"
