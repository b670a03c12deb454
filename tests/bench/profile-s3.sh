#!/usr/bin/env bash
# Issue 26 profile: where a first pass over S3 spends the daemon's CPU, against rclone's. S3Proxy on
# loopback (direct, no delay), the 2,000-file dataset (FILES=N: N files), an empty cache; one
# first pass with THREADS readers (page cache dropped) through hintfs under Java Flight Recorder (settings=profile), then
# through `rclone mount --vfs-cache-mode full`. For each: files/s and the mount process's CPU
# seconds (utime + stime from /proc) per 1,000 misses; then hintfs's hot frames (tests/bench/jfr_top.py).
# PERF=1: perf instead of JFR (every thread, the kernel's side included; JIT frames named from the
# JVM's perf map): the daemon's samples by thread and its hottest symbols. JFR's printers have
# named some frames wrongly in these recordings (BENCHMARKS.md); perf's names are the JIT's own.
# Usage: [FILES=N] [PERF=1] tests/bench/profile-s3.sh [WORKDIR] [THREADS]   (root; after mvn
#        package; needs rclone)
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

rm -rf "$work/cache" "$work/rec.jfr" "$work/perf.data"
if [[ -n ${PERF:-} ]]; then
  # perf samples every thread, the kernel's side and the compilers included, and names JIT frames
  # from the JVM's perf map; the daemon runs as shipped (its AOT cache, no recording options).
  "$hintfs" aot-cache >&2
  mount_fs hintfs "$port" s3p "$work/mnt" "$work/cache" --ram-cache 0
else
  HINTFS_JAVA_OPTS="-XX:StartFlightRecording=filename=$work/rec.jfr,settings=profile,dumponexit=true" \
    mount_fs hintfs "$port" s3p "$work/mnt" "$work/cache" --ram-cache 0
fi
pid=$("$hintfs" status --json "$work/mnt" | /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["pid"])')
drop
since=$(date -u +%Y-%m-%dT%H:%M:%S)
[[ -z ${PERF:-} ]] || { perf record -F 499 -g -p "$pid" -o "$work/perf.data" 2>/dev/null & perf_pid=$!; }
c0=$(cpu "$pid")
h=$(run "$work/mnt" "$threads" 1)
c1=$(cpu "$pid")
if [[ -n ${PERF:-} ]]; then
  jcmd "$pid" Compiler.perfmap >/dev/null
  kill -INT "$perf_pid"
  wait "$perf_pid" || true
fi
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
printf '| hintfs | %.0f | %.2f |\n' "$h" "$(echo "($c1 - $c0) * 1000 / $ds_files" | bc -l)"
printf '| rclone | %.0f | %.2f |\n' "$rc" "$(echo "($r1 - $r0) * 1000 / $ds_files" | bc -l)"
sleep 1
if [[ -n ${PERF:-} ]]; then
  # By thread group, then the hottest symbols (self) over the whole process.
  perf report -i "$work/perf.data" --no-children --sort comm --stdio -g none 2>/dev/null |
    grep -E '^ +[0-9.]+%' | awk '{ p = $1; sub("%", "", p); $1 = ""; n = $0; gsub(/^ +| +$/, "", n)
      sub(/[-#]?[0-9]+$/, "", n); s[n] += p }
      END { for (k in s) printf "%6.2f%%  %s\n", s[k], k }' | sort -rn | awk 'NR <= 15'
  perf report -i "$work/perf.data" --no-children --sort dso,sym --stdio -g none 2>/dev/null |
    grep -E '^ +[0-9.]+%' | awk 'NR <= 40'
  exit 0
fi
for ev in jdk.ExecutionSample jdk.NativeMethodSample; do
  echo "$ev:"
  "${JFR:-/usr/lib/jvm/temurin-25-jdk-amd64/bin/jfr}" print --json --events "$ev" --stack-depth 64 "$work/rec.jfr" |
    /usr/bin/python3 "$root/tests/bench/jfr_top.py" 15 "$since"
done
