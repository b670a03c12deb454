#!/usr/bin/env bash
# A disk slower than the source (issue 40): the cache directory on its own ext4 file system (a
# 2 GiB image on a loop device) that is frozen (fsfreeze: every write waits) while 8 readers read
# the whole FILES-file dataset (default 4,000 of ~110 KB, 440 MB) through a mount with no RAM tier;
# the daemon's RSS is sampled every 0.1 s. Then the disk is thawed. Prints per jar: seconds for the
# pass, the daemon's RSS before and at its peak, wrong bytes, and what status says of disk writes.
# Usage: tests/bench/slow-disk-bench.sh [WORKDIR] (root; after mvn package; needs losetup, fsfreeze)
#   JARS="before=OLD.jar after=NEW.jar"; ARGS passes options to every mount, ARGS_<label> to that
#   side's only (e.g. ARGS_after="--write-queue 32M": an older jar has no such option).
set -euo pipefail
source "$(dirname "$(readlink -f "$0")")/lib.sh"
work=${1:-/tmp/hintfs-slow-disk-bench}
FILES=${FILES:-4000} ds_files=${FILES:-4000}
make_dataset "$work/src"
mkdir -p "$work/mnt" "$work/disk"
unmount_if_mounted "$work/mnt"
if ! mountpoint -q "$work/disk"; then
  rm -f "$work/disk.img" && truncate -s 2G "$work/disk.img" && mkfs.ext4 -q -F "$work/disk.img"
  mount -o loop "$work/disk.img" "$work/disk"
fi
trap 'fsfreeze -u "$work/disk" 2>/dev/null || true; unmount_if_mounted "$work/mnt"; umount "$work/disk" || true' EXIT
for side in ${JARS:-built=$root/fs/target/hintfs.jar}; do
  export HINTFS_JAR=${side#*=}
  rm -rf "$work/disk/cache"
  label=${side%%=*}
  extra=ARGS_$label
  # shellcheck disable=SC2086 # ARGS are lists of options
  "$hintfs" mount "$work/src" "$work/mnt" --cache-dir "$work/disk/cache" --ram-cache 0 \
    --no-detect-order ${ARGS:-} ${!extra:-} >/dev/null
  pid=$(pgrep -f -- "org.hintfs.*$work/mnt" | head -1)
  sync && echo 3 >/proc/sys/vm/drop_caches
  rss0=$(awk '/VmRSS/ {print $2}' /proc/"$pid"/status)
  fsfreeze -f "$work/disk"
  peak=$rss0
  ( while sleep 0.1; do awk '/VmRSS/ {print $2}' /proc/"$pid"/status; done ) >"$work/rss" &
  sampler=$!
  t0=$EPOCHREALTIME
  wrong=$(/usr/bin/python3 - "$work/mnt" "$work/src" <<'PY'
import os, sys
from concurrent.futures import ThreadPoolExecutor
mnt, src = sys.argv[1:]
rels = sorted(os.path.join(d, f) for d in os.listdir(src) for f in os.listdir(os.path.join(src, d)))
def check(rel):
    with open(os.path.join(mnt, rel), "rb") as a, open(os.path.join(src, rel), "rb") as b:
        return a.read() != b.read()
with ThreadPoolExecutor(8) as ex:
    print(sum(ex.map(check, rels)))
PY
)
  secs=$(echo "$EPOCHREALTIME - $t0" | bc)
  kill "$sampler"
  peak=$(sort -n "$work/rss" | tail -1)
  writes=$("$hintfs" status "$work/mnt" | grep -E "disk writes" || echo "disk writes: (no line)")
  fsfreeze -u "$work/disk"
  "$hintfs" unmount "$work/mnt"
  printf '%s: %s files in %.1f s with the disk frozen, wrong %s, RSS %d MiB -> peak %d MiB; %s\n' \
    "${side%%=*}" "$FILES" "$secs" "$wrong" $((rss0 / 1024)) $((peak / 1024)) "$(echo $writes)"
done
