#!/usr/bin/env bash
# First epoch from S3: hintfs vs s3fs vs rclone mount over a real S3 server (S3Proxy 4.1.0 on
# loopback, filesystem backend), directly and behind a TCP proxy that adds 10 ms to every request
# (tc netem is not in this kernel). Dataset: 2,000 files of ~110 KB in 20 classes (220 MB; FILES=N
# for N files, in a WORKDIR of their own).
# For each filesystem, endpoint and reader count (1, 8): a fresh mount with an empty cache, a first
# pass (every file a miss) and a second pass (page cache dropped before each pass, so the second
# pass is served by each filesystem's own disk cache). s3fs runs with its disk cache (use_cache),
# rclone with --vfs-cache-mode full. Prints files/s and the ratios hintfs/s3fs, hintfs/rclone.
# hintfs's first pass must cost exactly one GET per open miss (the script fails otherwise).
# For every first pass, the mount process's CPU seconds (utime + stime from /proc) per 1,000 misses
# (every file): what a miss costs each filesystem, in the same run.
# S3Proxy is a JVM too: before the first mount, every object is read three times (rclone copy),
# so that no filesystem pays for the server's own warm-up. hintfs runs as setup.sh leaves it: with
# the AOT cache (`hintfs aot-cache`, built here; HINTFS_AOT=0 runs without one).
# Between each mount and its first pass, a trainer's start: `import torch, torchvision` in
# /usr/bin/python3 (1.5-3 s of CPU here), the same for every filesystem (NO_TRAINER_START=1 leaves
# it out).
# FS_ORDER: the order the filesystems are measured in at each endpoint (default: hintfs s3fs rclone).
# Usage: tests/bench/s3-bench.sh [WORKDIR] (root; after mvn package; needs s3fs and rclone)
set -euo pipefail
source "$(dirname "$(readlink -f "$0")")/lib.sh"
work=${1:-/tmp/hintfs-s3bench}
s3_bench_start "$work"
if [[ ${HINTFS_AOT:-1} != 0 ]]; then "$hintfs" aot-cache >&2; fi

tick=$(getconf CLK_TCK)
cpu() { awk -v t="$tick" '{print ($14 + $15) / t}' "/proc/$1/stat"; }
# mount_pid FS MNT: the process serving the mount.
mount_pid() {
  case $1 in
    hintfs) "$hintfs" status --json "$2" |
      /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["pid"])' ;;
    s3fs) pgrep -n -x s3fs ;; # it rewrites its own argv (bench:/ds reads "bench /ds")
    rclone) pgrep -n -f "rclone mount .*bench/ds $2" ;;
  esac
}

declare -A r cpus
for ep in direct proxy; do
  if [[ $ep == direct ]]; then p=$port remote=s3p; else p=$pport remote=s3x; fi
  for fs in ${FS_ORDER:-hintfs s3fs rclone}; do
    for t in 1 8; do
      rm -rf "$work/cache"
      mount_fs $fs $p $remote "$work/mnt" "$work/cache" --ram-cache 0
      pid=$(mount_pid $fs "$work/mnt")
      [[ -n ${NO_TRAINER_START:-} ]] || /usr/bin/python3 -c 'import torch, torchvision'
      drop; c0=$(cpu "$pid"); r[$ep,$fs,$t,1]=$(run "$work/mnt" $t 1); c1=$(cpu "$pid")
      cpus[$ep,$fs,$t]=$(echo "($c1 - $c0) / ($ds_files / 1000)" | bc -l)
      [[ $fs != hintfs ]] || one_get_per_miss "$work/mnt" # the first pass: one GET per miss
      drop; r[$ep,$fs,$t,2]=$(run "$work/mnt" $t 2)
      unmount_fs $fs "$work/mnt"
      echo "$ep $fs $t readers: ${r[$ep,$fs,$t,1]} then ${r[$ep,$fs,$t,2]} files/s," \
        "first pass ${cpus[$ep,$fs,$t]} CPU s per 1,000 misses" >&2
    done
  done
done
echo "| endpoint | readers | pass | hintfs files/s | s3fs | rclone | hintfs/s3fs | hintfs/rclone |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- |"
for ep in direct proxy; do for t in 1 8; do for pass in 1 2; do
  h=${r[$ep,hintfs,$t,$pass]} s=${r[$ep,s3fs,$t,$pass]} c=${r[$ep,rclone,$t,$pass]}
  printf '| %s | %s | %s | %.0f | %.0f | %.0f | %.1fx | %.1fx |\n' "$ep" "$t" \
    "$([[ $pass == 1 ]] && echo first || echo second)" "$h" "$s" "$c" "$(ratio "$h" "$s")" "$(ratio "$h" "$c")"
done; done; done
echo
echo "| endpoint | readers | CPU s per 1,000 misses: hintfs | s3fs | rclone |"
echo "| --- | --- | --- | --- | --- |"
for ep in direct proxy; do for t in 1 8; do
  printf '| %s | %s | %.2f | %.2f | %.2f |\n' "$ep" "$t" \
    "${cpus[$ep,hintfs,$t]}" "${cpus[$ep,s3fs,$t]}" "${cpus[$ep,rclone,$t]}"
done; done
