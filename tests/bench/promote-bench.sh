#!/usr/bin/env bash
# Issue 15 benchmark: the known order feeds RAM. The 2,000-file dataset is fully cached on disk;
# each run remounts (empty RAM tier), drops the page cache, and reads one epoch with a DataLoader
# (DistributedSampler(seed=7), 4 workers, batch 32: tests/bench/seed_epoch.py). Runs, alternated:
# the source directory on local ext4 (the reference); hintfs with no hint (order recognition off,
# so every open reads LMDB on the FUSE thread); hintfs with the seed hint (files in the window are
# read ahead from disk: up to 256 KiB their pages of the map, by the kernel (MADV_WILLNEED); larger
# ones promoted into RAM). Median of REPS; images/s and ratios to ext4.
# Usage: tests/bench/promote-bench.sh [WORKDIR] (root; after mvn package)
set -euo pipefail
source "$(dirname "$(readlink -f "$0")")/lib.sh"
work=${1:-/tmp/hintfs-promote-bench}
reps=${REPS:-3}
make_dataset "$work/src"
mkdir -p "$work/mnt"
unmount_if_mounted "$work/mnt"
trap 'unmount_if_mounted "$work/mnt"' EXIT
rm -rf "$work/cache"
"$hintfs" mount "$work/src" "$work/mnt" --cache-dir "$work/cache" >/dev/null
cat "$work"/mnt/*/* >/dev/null # fill the cache
"$hintfs" unmount "$work/mnt"
epoch() { # DIR HINT
  drop
  /usr/bin/python3 "$root/tests/bench/seed_epoch.py" "$1" 7 "$2" 1
}
ext=() plain=() hinted=() promoted=()
for ((r = 0; r < reps; r++)); do
  ext+=("$(epoch "$work/src" 0)")
  "$hintfs" mount "$work/src" "$work/mnt" --cache-dir "$work/cache" --no-detect-order >/dev/null
  plain+=("$(epoch "$work/mnt" 0)")
  "$hintfs" unmount "$work/mnt"
  "$hintfs" mount "$work/src" "$work/mnt" --cache-dir "$work/cache" >/dev/null
  hinted+=("$(epoch "$work/mnt" 1)")
  json=$("$hintfs" status --json "$work/mnt")
  promoted+=("$(grep -o '"promoted_to_ram" *: *[0-9]*' <<<"$json" | tr -dc 0-9)/$(grep -o '"disk_read_ahead" *: *[0-9]*' <<<"$json" | tr -dc 0-9)")
  "$hintfs" unmount "$work/mnt"
  echo "run $r: ext4 ${ext[-1]}, no hint ${plain[-1]}, seed hint ${hinted[-1]} (promoted to RAM/pages read ahead: ${promoted[-1]})" >&2
done
e=$(median "${ext[@]}") p=$(median "${plain[@]}") h=$(median "${hinted[@]}")
echo "| ext4 cold images/s | hintfs cached, no hint | hintfs cached, seed hint | no hint / ext4 | seed hint / ext4 | files promoted to RAM / pages read ahead (last run) |"
echo "| --- | --- | --- | --- | --- | --- |"
printf '| %.0f | %.0f | %.0f | %.2f | %.2f | %s |\n' "$e" "$p" "$h" "$(ratio "$p" "$e")" \
  "$(ratio "$h" "$e")" "${promoted[-1]}"
