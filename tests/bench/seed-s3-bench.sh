#!/usr/bin/env bash
# Issue 7 benchmark over S3: the seed-bench DataLoader (DistributedSampler(seed=7), 4 workers,
# batch 32, 3 epochs, page cache dropped before each) reading the 2,000-file dataset from S3Proxy
# behind DelayProxy's 10 ms per request. hintfs with a 50% cache with and without the seed hint,
# hintfs fully cached beforehand (the ceiling), and s3fs (use_cache) and rclone
# (--vfs-cache-mode full), whose caches are unbounded. images/s per epoch.
# Usage: tests/bench/seed-s3-bench.sh [WORKDIR] (root; after mvn package; needs s3fs and rclone)
set -euo pipefail
source "$(dirname "$(readlink -f "$0")")/lib.sh"
work=${1:-/tmp/hintfs-s3bench}
make_dataset "$work/src"
mkdir -p "$work/mnt"
s3_start "$work"
trap 's3_stop "$work"' EXIT
epoch_rates() { # FS HINT CACHE_SIZE WARM
  rm -rf "$work/cache"
  mount_fs "$1" "$pport" s3x "$work/mnt" "$work/cache" --cache-size "$3" --ram-cache 0
  if [[ $4 == warm ]]; then cat "$work"/mnt/*/* >/dev/null; fi
  /usr/bin/python3 "$root/tests/bench/seed_epoch.py" "$work/mnt" 7 "$2" 3
  unmount_fs "$1" "$work/mnt"
}
with=$(epoch_rates hintfs 1 50% cold)
without=$(epoch_rates hintfs 0 50% cold)
cached=$(epoch_rates hintfs 0 100% warm)
s3fs=$(epoch_rates s3fs 0 - cold)
rclone=$(epoch_rates rclone 0 - cold)
echo "| run (S3 behind 10 ms) | epoch 0 images/s | epoch 1 | epoch 2 |"
echo "| --- | --- | --- | --- |"
echo "| hintfs, seed hint, cache 50% | ${with// / | } |"
echo "| hintfs, no hint, cache 50% | ${without// / | } |"
echo "| hintfs, fully cached (ceiling) | ${cached// / | } |"
echo "| s3fs, use_cache | ${s3fs// / | } |"
echo "| rclone, vfs-cache-mode full | ${rclone// / | } |"
e2() { echo "$1" | awk '{print $3}'; }
printf 'epoch 2: hint/no hint %.1fx, hint/fully cached %.2f, hint/s3fs %.1fx, hint/rclone %.1fx\n' \
  "$(ratio "$(e2 "$with")" "$(e2 "$without")")" "$(ratio "$(e2 "$with")" "$(e2 "$cached")")" \
  "$(ratio "$(e2 "$with")" "$(e2 "$s3fs")")" "$(ratio "$(e2 "$with")" "$(e2 "$rclone")")"
