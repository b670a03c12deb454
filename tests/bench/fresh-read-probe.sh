#!/usr/bin/env bash
# A fresh daemon's first read of large files, with its memory and CPU (issue 38): per row a new
# mount over S3Proxy (direct, no delay) with an empty cache, the page cache dropped, then READERS
# readers (`dd bs=1M`): 1 reads one 1 GiB file, 8 read eight shards of 128 MiB at once. Prints per
# row the first read's MB/s, the daemon's CPU (user + system) over it, its RSS high-water mark, the
# source's GETs, and the read again (page cache and LMDB map dropped) in the same daemon.
#
#   ROWS="before:/path/old.jar after:fs/target/hintfs.jar" READERS=8 ROUNDS=2 \
#     tests/bench/fresh-read-probe.sh /tmp/frp
#
# ROWS: "tag:jar[:mount options]" entries, run in that order, ROUNDS times (alternating). No AOT
# cache is built for the jars: compare jars with each other here, and with rclone and s3fs in
# large-file-bench.sh. BENCHMARKS.md ("A block read ahead is fetched into native memory") has runs.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
work=${1:?usage: fresh-read-probe.sh WORK_DIR}
readers=${READERS:-1}
mib=1048576
case $readers in
  1) files=(big.bin); size=$((1024 * mib)) ;;
  8) files=(shard-0.tar shard-1.tar shard-2.tar shard-3.tar shard-4.tar shard-5.tar shard-6.tar shard-7.tar)
     size=$((128 * mib)) ;;
  *) echo "fresh-read-probe: READERS must be 1 or 8, not '$readers'" >&2; exit 2 ;;
esac
mkdir -p "$work/src/n00000000" "$work/mnt"
for f in "${files[@]}"; do
  [[ -f $work/src/n00000000/$f ]] || head -c "$size" /dev/urandom >"$work/src/n00000000/$f"
done
s3_start "$work"
trap "s3_stop '$work'" EXIT
read_all() {
  local pids=()
  for f in "${files[@]}"; do dd if="$work/mnt/n00000000/$f" of=/dev/null bs=1M status=none & pids+=($!); done
  wait "${pids[@]}"
}
mbps() { local t0=$EPOCHREALTIME; "$@"; echo "1073741824 / ($EPOCHREALTIME - $t0) / 1000000" | bc -l; }
cpu() { awk '{print ($14 + $15) / 100}' "/proc/$1/stat"; }
for r in $(seq "${ROUNDS:-2}"); do
  for row in ${ROWS:?ROWS=\"tag:jar[:opts] ...\"}; do
    tag=${row%%:*}; rest=${row#*:}; jar=${rest%%:*}; opts=
    [[ $rest == *:* ]] && opts=${rest#*:}
    rm -rf "$work/cache"
    # shellcheck disable=SC2086
    HINTFS_JAR=$jar mount_fs hintfs "$port" s3p "$work/mnt" "$work/cache" $opts
    pid=$(pgrep -f "java.*$work/mnt" | head -1)
    drop; c0=$(cpu "$pid")
    first=$(mbps read_all)
    c1=$(cpu "$pid")
    hwm=$(awk '/VmHWM/ {print int($2 / 1024)}' "/proc/$pid/status")
    gets=$("$hintfs" status --json "$work/mnt" | /usr/bin/python3 -c \
      'import json, sys; print(json.load(sys.stdin)["source_requests"]["gets"])')
    sleep 2; drop
    again=$(mbps read_all)
    "$hintfs" unmount "$work/mnt"
    printf 'round %s %-10s %s reader(s): first %4.0f MB/s, daemon CPU %5.2f s, RSS high-water %5s MB, GETs %s; again %4.0f MB/s\n' \
      "$r" "$tag" "$readers" "$first" "$(echo "$c1 - $c0" | bc)" "$hwm" "$gets" "$again"
  done
done
