#!/usr/bin/env bash
# Issue 26 profile: where a first pass over S3 spends the daemon's CPU, against rclone's. S3Proxy on
# loopback (direct, no delay), the 2,000-file dataset, an empty cache; one first pass with THREADS
# readers (page cache dropped) through hintfs under Java Flight Recorder (settings=profile), then
# through `rclone mount --vfs-cache-mode full`. For each: files/s and the mount process's CPU
# seconds (utime + stime from /proc) per 1,000 misses; then hintfs's hot frames (tests/bench/jfr_top.py).
# Usage: tests/bench/profile-s3.sh [WORKDIR] [THREADS]   (root; after mvn package; needs rclone)
set -euo pipefail
source "$(dirname "$(readlink -f "$0")")/lib.sh"
work=${1:-/tmp/hintfs-profile-s3}
threads=${2:-8}
make_dataset "$work/src"
compile_reader "$work"
mkdir -p "$work/mnt"
s3_start "$work"
trap 's3_stop "$work"' EXIT
tick=$(getconf CLK_TCK)
cpu() { awk -v t="$tick" '{print ($14 + $15) / t}' "/proc/$1/stat"; }

rm -rf "$work/cache" "$work/rec.jfr"
HINTFS_JAVA_OPTS="-XX:StartFlightRecording=filename=$work/rec.jfr,settings=profile,dumponexit=true" \
  mount_fs hintfs "$port" s3p "$work/mnt" "$work/cache" --ram-cache 0
pid=$("$hintfs" status --json "$work/mnt" | /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["pid"])')
drop
since=$(date -u +%Y-%m-%dT%H:%M:%S)
c0=$(cpu "$pid")
h=$(run "$work/mnt" "$threads" 1)
c1=$(cpu "$pid")
one_get_per_miss "$work/mnt"
"$hintfs" unmount "$work/mnt"
rm -rf "$work/cache"
mount_fs rclone "$port" s3p "$work/mnt" "$work/cache"
rpid=$(pgrep -n -f "rclone mount s3p:bench/ds $work/mnt")
drop
r0=$(cpu "$rpid")
rc=$(run "$work/mnt" "$threads" 1)
r1=$(cpu "$rpid")
umount "$work/mnt"
printf '| mount | files/s | CPU s per 1,000 misses |\n| --- | --- | --- |\n'
printf '| hintfs | %.0f | %.2f |\n' "$h" "$(echo "($c1 - $c0) / 2" | bc -l)"
printf '| rclone | %.0f | %.2f |\n' "$rc" "$(echo "($r1 - $r0) / 2" | bc -l)"
sleep 1
for ev in jdk.ExecutionSample jdk.NativeMethodSample; do
  echo "$ev:"
  "${JFR:-/usr/lib/jvm/temurin-25-jdk-amd64/bin/jfr}" print --json --events "$ev" --stack-depth 64 "$work/rec.jfr" |
    /usr/bin/python3 "$root/tests/bench/jfr_top.py" 15 "$since"
done
