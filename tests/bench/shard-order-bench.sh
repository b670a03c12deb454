#!/usr/bin/env bash
# Issue 38 benchmark: shards read in a shuffled order, as one WebDataset worker reads them, over S3
# (S3Proxy 4.1.0 on loopback behind DelayProxy adding S3_DELAY_MS, default 10 ms per request).
# Dataset: large-file-bench.sh's 8 shards of 128 MiB under n00000000/ (made if WORKDIR lacks them).
# One reader: `dd bs=1M` of each shard in turn, in a fixed shuffle (3 6 1 0 7 4 2 5), first read
# (a fresh mount, an empty cache, the page cache dropped). Rows:
#   hintfs            default options, no hint: read-ahead within each shard only
#   hintfs + order    the same, with the shuffle sent first (`order n00000000/shard-3.tar ...`):
#                     the shards after the one being read are prefetched whole
#   rclone            rclone mount, --vfs-cache-mode full
# Columns: MB/s (1 GiB over the wall time of the 8 reads) and the object GETs the proxy forwarded.
# Every byte is compared with the source after each hintfs row (cmp, page cache dropped first).
# Usage: tests/bench/shard-order-bench.sh [WORKDIR] (root; after mvn package and test-compile)
#   RUNS=N repeats the three rows (default 1). Run under flock /tmp/hintfs-bench.lock.
set -euo pipefail
source "$(dirname "$(readlink -f "$0")")/lib.sh"
work=${1:-/tmp/hintfs-largebench}
mib=1048576
order=(3 6 1 0 7 4 2 5)

if [[ ! -f $work/src/n00000000/shard-7.tar ]]; then
  mkdir -p "$work/src/n00000000"
  for i in 0 1 2 3 4 5 6 7; do head -c $((128 * mib)) /dev/urandom >"$work/src/n00000000/shard-$i.tar"; done
fi
mkdir -p "$work/mnt"
unmount_if_mounted "$work/mnt"
s3_start "$work"
trap "s3_stop '$work'" EXIT

read_in_order() {
  for i in "${order[@]}"; do dd if="$work/mnt/n00000000/shard-$i.tar" of=/dev/null bs=1M status=none; done
}

rows=()
for run in $(seq "${RUNS:-1}"); do
  for row in hintfs "hintfs + order" rclone; do
    rm -rf "$work/cache"
    gproxy_start
    export RCLONE_CONFIG_S3G_TYPE=s3 RCLONE_CONFIG_S3G_PROVIDER=Other \
      RCLONE_CONFIG_S3G_ACCESS_KEY_ID=$key RCLONE_CONFIG_S3G_SECRET_ACCESS_KEY=$secret \
      RCLONE_CONFIG_S3G_ENDPOINT=http://127.0.0.1:$gport RCLONE_CONFIG_S3G_FORCE_PATH_STYLE=true
    fs=${row%% *}
    mount_fs "$fs" "$gport" s3g "$work/mnt" "$work/cache"
    if [[ $row == *order* ]]; then
      line=order
      for i in "${order[@]}"; do line+=" n00000000/shard-$i.tar"; done
      echo "$line" >"$work/mnt/.hintfs/control" # this shell writes it: its dd children are its stream
    fi
    drop
    t0=$EPOCHREALTIME
    read_in_order
    mbs=$(echo "1024 * $mib / ($EPOCHREALTIME - $t0) / 1000000" | bc -l)
    if [[ $fs == hintfs ]]; then
      drop
      for i in 0 1 2 3 4 5 6 7; do cmp "$work/mnt/n00000000/shard-$i.tar" "$work/src/n00000000/shard-$i.tar"; done
      pb=$("$hintfs" status --json "$work/mnt" | /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin).get("prefetched_blocks", "-"))')
    else
      pb=-
    fi
    unmount_fs "$fs" "$work/mnt"
    gproxy_stop
    echo "run $run, $row: $(printf %.0f "$mbs") MB/s, $ggets GETs (first read), prefetched blocks $pb" >&2
    rows+=("| $run | $row | $(printf %.0f "$mbs") | $ggets | $pb |")
  done
done
echo "| run | fs | first read of 8 x 128 MiB shards in a shuffled order, MB/s | object GETs (read + cmp) | blocks prefetched by the order |"
echo "| --- | --- | --- | --- | --- |"
printf '%s\n' "${rows[@]}"
