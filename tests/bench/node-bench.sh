#!/usr/bin/env bash
# One node, several ranks: a DDP-style job on one node. World 1, 2 and 4; each rank a process with
# DistributedSampler(seed 0) over ImageFolder (raw bytes loader), a DataLoader with 2 workers and
# batch 16 (tests/src/test/python/ranks_check.py, which also checks every byte). The 2,000-file
# dataset (~110 KB each) on S3 (S3Proxy behind DelayProxy's 10 ms per request) and on a directory
# source with 10 ms per read (--source-latency-ms). Caches are 50% of the dataset, the page cache
# is dropped before every epoch (all ranks wait at a barrier for it), 3 epochs. Rows:
#   hintfs, hints        hints.follow(DistributedSampler): seed/epoch/world/rank each epoch
#   hintfs, no hints     the same job without a single control-file write: the mount recognises
#                        each rank's sampler order from its first reads
#   hintfs, no hints, --no-detect-order   the same, recognition off (what no hint gave before)
#   s3fs            use_cache: its cache cannot be bounded (no size option), so it holds all
#   rclone          --vfs-cache-mode full --vfs-cache-max-size = 50% of the dataset
# s3fs and rclone have no directory-with-latency counterpart (rclone over a local directory would
# read it at local speed), so the directory rows are hintfs only. The RAM tier is off, so the 50%
# disk cache is all hintfs holds. Node images/s per epoch (all ranks' images over the slowest rank's
# time) and, for hintfs, the share of opens served locally after each rank's first batches.
# RUNS restricts the rows (default all: s3-hints s3-detect s3-nodetect s3fs rclone dir-hints
# dir-detect dir-nodetect); WORLDS the world sizes; HINTFS_JAR the build (an A/B of two builds).
# Usage: tests/bench/node-bench.sh [WORKDIR] (root; after mvn package; needs s3fs and rclone)
set -euo pipefail
source "$(dirname "$(readlink -f "$0")")/lib.sh"
work=${1:-/tmp/hintfs-nodebench}
epochs=${EPOCHS:-3}
worlds=${WORLDS:-1 2 4}
runs=" ${RUNS:-s3-hints s3-detect s3-nodetect s3fs rclone dir-hints dir-detect dir-nodetect} "
check="$root/tests/src/test/python/ranks_check.py"
make_dataset "$work/src"
mkdir -p "$work/mnt"
s3_start "$work"
trap 's3_stop "$work"; unmount_if_mounted "$work/mnt"' EXIT
half=$(($(du -sb "$work/src" | cut -f1) / 2))

# job FS SOURCE WORLD MODE: one run; prints its JSON line. MODE: hints, detect, nodetect, plain.
job() {
  local fs=$1 source=$2 world=$3 mode=$4 flags=() extra=()
  rm -rf "$work/cache"
  case $mode in
    hints) ;;
    detect) flags=(--no-control) ;;
    nodetect) flags=(--no-control); extra=(--no-detect-order) ;;
    plain) flags=(--plain) ;;
  esac
  case $fs:$source in
    hintfs:s3) mount_fs hintfs "$pport" s3x "$work/mnt" "$work/cache" --cache-size 50% --ram-cache 0 \
      "${extra[@]}" ;;
    hintfs:dir) "$hintfs" mount "$work/src" "$work/mnt" --cache-dir "$work/cache" --cache-size 50% \
      --ram-cache 0 --source-latency-ms 10 "${extra[@]}" >/dev/null ;;
    s3fs:s3) mount_fs s3fs "$pport" s3x "$work/mnt" "$work/cache" ;;
    rclone:s3) rclone mount s3x:bench/ds "$work/mnt" --read-only --vfs-cache-mode full \
      --vfs-cache-max-size "$half" --cache-dir "$work/cache" --daemon 2>/dev/null
      for _ in $(seq 100); do [[ -d $work/mnt/n00000000 ]] && break; sleep 0.1; done ;;
  esac
  /usr/bin/python3 "$check" "$work/mnt" "$work/src" --root . --world "$world" --epochs "$epochs" \
    --seed 0 --drop-caches "${flags[@]}"
  if [[ $fs == hintfs ]]; then "$hintfs" unmount "$work/mnt"; else umount "$work/mnt"; fi
}

# row LABEL JSON: a Markdown row of images/s per epoch and local shares.
row() {
  /usr/bin/python3 - "$1" "$2" <<'PY'
import json, sys
label, d = sys.argv[1], json.loads(sys.argv[2])
rates = " | ".join("%.0f" % r for r in d["node_images_per_s"])
local = [min(r["local"][e] for r in d["ranks"]) for e in range(len(d["ranks"][0].get("local", [])))]
print("| %s | %d | %s | %s |" % (label, d["world"], rates,
      " / ".join("%.2f" % x for x in local) if local else "-"))
PY
}

echo "| run | world | epoch 0 images/s | epoch 1 | epoch 2 | local opens per epoch (worst rank) |"
echo "| --- | --- | --- | --- | --- | --- |"
# maybe RUN LABEL FS SOURCE WORLD MODE: the row, if RUN is among $runs.
maybe() { if [[ $runs == *" $1 "* ]]; then row "$2" "$(job "$3" "$4" "$5" "$6")"; fi; }

for w in $worlds; do
  maybe s3-hints "S3 10 ms: hintfs, hints" hintfs s3 "$w" hints
  maybe s3-detect "S3 10 ms: hintfs, no hints (recognised)" hintfs s3 "$w" detect
  maybe s3-nodetect "S3 10 ms: hintfs, no hints, --no-detect-order" hintfs s3 "$w" nodetect
  maybe s3fs "S3 10 ms: s3fs (cache unbounded)" s3fs s3 "$w" plain
  maybe rclone "S3 10 ms: rclone (cache 50%)" rclone s3 "$w" plain
  maybe dir-hints "dir 10 ms: hintfs, hints" hintfs dir "$w" hints
  maybe dir-detect "dir 10 ms: hintfs, no hints (recognised)" hintfs dir "$w" detect
  maybe dir-nodetect "dir 10 ms: hintfs, no hints, --no-detect-order" hintfs dir "$w" nodetect
done
