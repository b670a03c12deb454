#!/usr/bin/env bash
# What the RAM tier's bytes cost the collector at JPEG sizes. FILES files of ~110 KB
# (lib.sh's make_dataset; default 8,000, ~880 MB: more than the default 512 MiB RAM tier, so it
# fills and evicts) in a local tree; for each jar, a fresh mount with default options (the
# launcher's JVM options, Serial) and a fresh cache dir, then two passes of ReadBench (4 threads,
# each pass its own seeded order): pass 1 misses every file (fetched, put in the RAM tier and on
# disk), pass 2 is cached (RAM or disk hits). Per pass: files/s, the daemon's GC pauses over the
# pass (lib.sh gc_pauses: max / p99 ms, count, full collections, the longest's CPU ms; the log is
# WORK/gc-LABEL.log), and its RSS after the pass: all of it (VmRSS, which counts the pages of the
# LMDB map the reads touched) and its anonymous part (RssAnon: heap, malloc, the JVM's own).
# Usage (root, under the bench lock; ~1 min a jar; ENV: NAME=VALUE pairs for the daemon, e.g.
# MALLOC_ARENA_MAX=2):
#   flock /tmp/hintfs-bench.lock tests/bench/ram-gc-bench.sh [WORK] LABEL=JAR[,JVM OPTIONS[,ENV]] ...
set -euo pipefail
source "$(dirname "$(readlink -f "$0")")/lib.sh"
work=${1:-/tmp/hintfs-ram-gc-bench}
shift
ds_files=${FILES:-8000}
make_dataset "$work/src-$ds_files"
compile_reader "$work"
mkdir -p "$work/mnt"
unmount_if_mounted "$work/mnt"
trap 'unmount_if_mounted "$work/mnt"' EXIT
rss() { awk '/VmRSS|RssAnon/ { v[$1] = int($2 / 1024) } END { printf "%d (anon %d)", v["VmRSS:"], v["RssAnon:"] }' "/proc/$1/status"; }
now() { /usr/bin/python3 -c 'import time; print(time.time())'; }

echo "$ds_files files of ~110 KB, default options (RAM tier 512 MiB), ReadBench 4 threads"
echo "| build | pass | files/s | GC pauses over the pass: max / p99 ms (n, full; CPU ms of the max) | RSS MB after (anon) |"
echo "| --- | --- | --- | --- | --- |"
for spec in "$@"; do
  label=${spec%%=*} rest=${spec#*=}
  IFS=, read -r jar opts envs <<<"$rest"
  gclog=$work/gc-$label.log
  rm -rf "$work/cache" "$gclog"
  # shellcheck disable=SC2086 # ENV is split into NAME=VALUE words on purpose
  env ${envs:-} HINTFS_JAR="$jar" HINTFS_JAVA_OPTS="$(gc_log_opts "$gclog") ${opts:-}" "$hintfs" mount \
    "$work/src-$ds_files" "$work/mnt" --cache-dir "$work/cache" --log-file "$work/daemon-$label.log" >/dev/null
  pid=$(/usr/bin/python3 -c "import json; print(json.load(open('$work/mnt/.hintfs/stats'))['pid'])")
  for pass in 1 2; do
    lines=$(wc -l <"$gclog")
    t0=$(now)
    fps=$(run "$work/mnt" 4 "$pass")
    t1=$(now)
    gc=$(gc_pauses "$gclog" "$lines" "{\"wall\": [$t0, $t1]}")
    echo "| $label | $pass ($([[ $pass == 1 ]] && echo misses || echo cached)) | $fps | ${gc%, with the scan*} | $(rss "$pid") |"
  done
  HINTFS_JAR=$jar "$hintfs" unmount "$work/mnt"
done
