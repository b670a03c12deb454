#!/usr/bin/env bash
# Source reads in flight (--max-fetches) against the source's latency: the seed-bench DataLoader
# (DistributedSampler(seed=7), 4 workers, batch 32, 3 epochs, page cache dropped before each) over
# the 2,000-file dataset on S3Proxy behind DelayProxy, with the seed hint, a 50% cache and the RAM
# tier off, for each latency in LATENCIES and each value in FETCHES; rclone (--vfs-cache-mode full)
# at each latency as the reference. images/s per epoch, and each row over the first FETCHES value.
# Usage: tests/bench/fetches-bench.sh [WORKDIR] (root; after mvn package; needs rclone)
#   LATENCIES="10 50" FETCHES="64 256" to choose.
set -euo pipefail
source "$(dirname "$(readlink -f "$0")")/lib.sh"
work=${1:-/tmp/hintfs-fetches-bench}
latencies=${LATENCIES:-10 50}
fetches=${FETCHES:-64 256}
make_dataset "$work/src"
mkdir -p "$work/mnt"
unmount_if_mounted "$work/mnt"
epochs() { # FS HINT [hintfs options...] -> images/s per epoch
  local fs=$1 hint=$2
  shift 2
  rm -rf "$work/cache"
  mount_fs "$fs" "$pport" s3x "$work/mnt" "$work/cache" "$@"
  /usr/bin/python3 "$root/tests/bench/seed_epoch.py" "$work/mnt" 7 "$hint" 3
  unmount_fs "$fs" "$work/mnt"
}
echo "| latency | run | epoch 0 images/s | epoch 1 | epoch 2 | epochs 0 / 1 / 2 over the first row |"
echo "| --- | --- | --- | --- | --- | --- |"
for l in $latencies; do
  S3_DELAY_MS=$l s3_start "$work"
  trap 's3_stop "$work"' EXIT
  s3_warm "$work"
  first=
  for f in $fetches; do
    r=$(epochs hintfs 1 --cache-size 50% --ram-cache 0 --max-fetches "$f")
    first=${first:-$r}
    ratio=$(/usr/bin/python3 -c 'import sys; a=sys.argv[1].split(); b=sys.argv[2].split(); print(" / ".join("%.2f" % (float(x) / float(y)) for x, y in zip(a, b)))' "$r" "$first")
    echo "| $l ms | hintfs, seed hint, --max-fetches $f | ${r// / | } | $ratio |"
  done
  r=$(epochs rclone 0)
  echo "| $l ms | rclone, full cache | ${r// / | } | - |"
  s3_stop "$work"
  trap - EXIT
done
