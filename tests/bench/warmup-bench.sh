#!/usr/bin/env bash
# Issue 39: what the warm-up machinery at mount buys a fresh daemon's first pass at scale. S3Proxy
# (filesystem backend) behind DelayProxy's 10 ms per request, FILES files (default 100,000, the
# benches' ~110 KB shape in 20 classes; made once and kept in WORKDIR with S3Proxy's copy: remove
# WORKDIR when done), S3Proxy warmed first (one class, 5,000 objects, read 3 times). For each
# variant, ROUNDS times (default 2), alternating: the page cache dropped, a fresh hintfs mount with
# an empty cache and default options, then at once a trainer (first_pass.py: import torch and
# torchvision, ImageFolder scan, one DataLoader pass with 8 workers, batch 32, a seeded shuffle).
# Prints per run: seconds from the mount's start to the mount, the import's end, the scan's end,
# the first 2,000 samples and the pass's end; the pass's images/s; the daemon's CPU seconds; its
# GETs (every file once, prefetched or missed at its open, plus any fetched twice).
# VARIANTS: ';'-separated LABEL|JAR|MOUNT ARGS (JAR: a hintfs.jar in a directory of its own; its
# AOT cache is built there first, unless HINTFS_AOT=0).
# Usage: VARIANTS='on|/j/a/hintfs.jar|;off|/j/a/hintfs.jar|--no-warm-up' [ROUNDS=2] \
#        tests/bench/warmup-bench.sh [WORKDIR]   (root)
set -euo pipefail
export FILES=${FILES:-100000}
source "$(dirname "$(readlink -f "$0")")/lib.sh"
work=${1:-/tmp/hintfs-warmup-bench}
IFS=';' read -r -a variants <<<"${VARIANTS:?VARIANTS=LABEL|JAR|ARGS;...}"
make_dataset "$work/src"
mkdir -p "$work/mnt"
t=$SECONDS
s3_start "$work"
trap 's3_stop "$work"' EXIT
echo "S3Proxy up with $FILES objects in $((SECONDS - t)) s" >&2
for _ in 1 2 3; do
  rm -rf "$work/warm" && rclone copy --transfers 8 s3p:bench/ds/n00000000 "$work/warm" 2>/dev/null
done
rm -rf "$work/warm"
declare -A built
for v in "${variants[@]}"; do
  IFS='|' read -r _ jar _ <<<"$v"
  if [[ ${HINTFS_AOT:-1} != 0 && -z ${built[$jar]:-} ]]; then
    HINTFS_JAR=$jar "$hintfs" aot-cache >&2
    built[$jar]=1
  fi
done
tick=$(getconf CLK_TCK)
cpu() { awk -v t="$tick" '{print ($14 + $15) / t}' "/proc/$1/stat"; }
echo "| round | variant | mount s | import s | scan s | first 2,000 s | end s | pass images/s | daemon CPU s | GETs |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
for round in $(seq "${ROUNDS:-2}"); do
  for v in "${variants[@]}"; do
    IFS='|' read -r label jar margs <<<"$v"
    # shellcheck disable=SC2206 # the mount arguments are split on purpose
    margs=(${margs:-})
    rm -rf "$work/cache"
    drop
    t0=$EPOCHREALTIME
    HINTFS_JAR=$jar mount_fs hintfs "$pport" s3x "$work/mnt" "$work/cache" ${margs[@]+"${margs[@]}"}
    mounted=$(echo "$EPOCHREALTIME - $t0" | bc)
    pid=$("$hintfs" status --json "$work/mnt" |
      /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["pid"])')
    out=$(/usr/bin/python3 "$root/tests/bench/first_pass.py" "$work/mnt" "$t0")
    c=$(cpu "$pid")
    gets=$("$hintfs" status --json "$work/mnt" |
      /usr/bin/python3 -c 'import json,sys; s=json.load(sys.stdin); print(s["source_requests"]["gets"], s["open_misses"])')
    HINTFS_JAR=$jar "$hintfs" unmount "$work/mnt"
    echo "$out" | /usr/bin/python3 -c '
import json, sys
r, a = json.load(sys.stdin), sys.argv[1:]
print("| %s | %s | %.2f | %.2f | %.2f | %.2f | %.1f | %.0f | %.1f | %s |" % (a[0], a[1],
      float(a[2]), r["import_s"], r["scan_s"], r["first_2000_s"], r["end_s"], r["images_per_s"],
      float(a[3]), a[5]))
if r["files"] != int(a[4]) or int(a[5]) < int(a[4]):
    sys.exit("read %d files with %s GETs, expected %s" % (r["files"], a[5], a[4]))' \
      "$round" "$label" "$mounted" "$c" "$FILES" "${gets%% *}"
  done
done
