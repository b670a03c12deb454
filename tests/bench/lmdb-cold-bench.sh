#!/usr/bin/env bash
# Issue 26: where a cold cached read loses to ext4. The 2,000-file dataset, cached whole in LMDB by
# a first pass through a mount; then per round, each after the page cache is dropped (and the
# daemon's LMDB map paged out, lib.sh's drop), THREADS readers:
#   in-process, no FUSE (LmdbColdBench): the source files read whole; the cache's values read out
#     of LMDB (copy + CRC32C, as the daemon does)
#   through FUSE (ReadBench): the source directory on ext4 (no FUSE: the reference); a warm hintfs
#     daemon's cached files (the same daemon for every round, warmed first by WARM (default 8) cold
#     passes: passes the kernel's page cache answers would warm only the OPEN path, not the READ's)
# Median of REPS, files/s. Usage: tests/bench/lmdb-cold-bench.sh [WORKDIR]   (root; after mvn package)
set -euo pipefail
source "$(dirname "$(readlink -f "$0")")/lib.sh"
work=${1:-/tmp/hintfs-lmdb-cold-bench}
reps=${REPS:-3}
threads=${THREADS:-8}
jar=${HINTFS_JAR:-$root/fs/target/hintfs.jar}
make_dataset "$work/src"
compile_reader "$work"
javac -cp "$jar" -d "$work/classes" "$root/tests/bench/LmdbColdBench.java"
mkdir -p "$work/mnt"
unmount_if_mounted "$work/mnt"
trap 'unmount_if_mounted "$work/mnt"' EXIT
fill_cache "$work"
# inproc MODE PATH: files/s of one cold in-process pass (the drop between listing and reading)
inproc() {
  local fifo=$work/fifo out=$work/inproc.out
  rm -f "$fifo" "$out" && mkfifo "$fifo"
  java --add-opens java.base/java.nio=ALL-UNNAMED --add-opens java.base/sun.nio.ch=ALL-UNNAMED \
    -cp "$jar:$work/classes" LmdbColdBench "$1" "$2" "$threads" <"$fifo" >"$out" 2>/dev/null &
  local jpid=$!
  exec 7>"$fifo"
  until grep -q '^ready' "$out" 2>/dev/null; do sleep 0.05; done
  drop
  echo go >&7
  exec 7>&-
  wait "$jpid"
  awk -v m="$1" '$1 == m {print $3}' "$out"
}
declare -A res
for ((r = 0; r < reps; r++)); do
  res[files]+="$(inproc files "$work/src") "
  res[lmdb]+="$(inproc lmdb "$work/cache") "
done
"$hintfs" mount "$work/src" "$work/mnt" --cache-dir "$work/cache" >/dev/null
for ((s = 1; s <= ${WARM:-8}; s++)); do drop; run "$work/mnt" "$threads" "$s" >/dev/null; done
for ((r = 0; r < reps; r++)); do
  drop; res[ext4]+="$(run "$work/src" "$threads" $((r + 11))) "
  drop; res[mount]+="$(run "$work/mnt" "$threads" $((r + 21))) "
done
"$hintfs" unmount "$work/mnt"
# shellcheck disable=SC2086
f=$(median ${res[files]}) l=$(median ${res[lmdb]}) e=$(median ${res[ext4]}) m=$(median ${res[mount]})
echo "| path | source files (ext4) files/s | hintfs cache files/s | cache/source |"
echo "| --- | --- | --- | --- |"
printf '| in-process, no FUSE | %.0f | %.0f | %.2f |\n' "$f" "$l" "$(ratio "$l" "$f")"
printf '| through the kernel (ext4) / FUSE (hintfs) | %.0f | %.0f | %.2f |\n' "$e" "$m" "$(ratio "$m" "$e")"
echo "($threads threads, page cache dropped and LMDB map paged out before each pass, median of $reps)"
