#!/usr/bin/env bash
# Issue 2 benchmark: read every file of a ~2,000-file dataset (~110 KB each, varied) in random
# order with 1 and 8 threads, through a hintfs mount (no disk cache) and directly from the source
# directory, page cache dropped before the cold pass, then a warm pass. Median of REPS runs;
# prints a Markdown table of files/s and the mount/source ratio.
# Usage: tests/bench/read-bench.sh [WORKDIR] (root: it writes /proc/sys/vm/drop_caches)
set -euo pipefail
source "$(dirname "$(readlink -f "$0")")/lib.sh"
work=${1:-/tmp/hintfs-bench}
reps=${REPS:-3}
make_dataset "$work/src"
compile_reader "$work"
mkdir -p "$work/mnt"
unmount_if_mounted "$work/mnt"
"$hintfs" mount "$work/src" "$work/mnt" --no-disk-cache >/dev/null
trap '"$hintfs" unmount "$work/mnt"' EXIT

echo "| threads | pass | source files/s | mount files/s | mount/source |"
echo "| --- | --- | --- | --- | --- |"
for threads in 1 8; do
  sc=() mc=() sw=() mw=()
  for ((r = 0; r < reps; r++)); do
    seed=$((r + 1))
    drop; sc+=("$(run "$work/src" "$threads" "$seed")"); sw+=("$(run "$work/src" "$threads" "$((seed + 100))")")
    drop; mc+=("$(run "$work/mnt" "$threads" "$seed")"); mw+=("$(run "$work/mnt" "$threads" "$((seed + 100))")")
  done
  s=$(median "${sc[@]}"); m=$(median "${mc[@]}")
  printf '| %s | cold | %.0f | %.0f | %.2f |\n' "$threads" "$s" "$m" "$(ratio "$m" "$s")"
  s=$(median "${sw[@]}"); m=$(median "${mw[@]}")
  printf '| %s | warm | %.0f | %.0f | %.2f |\n' "$threads" "$s" "$m" "$(ratio "$m" "$s")"
done
