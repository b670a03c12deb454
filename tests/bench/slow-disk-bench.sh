#!/usr/bin/env bash
# A disk slower than the source (issue 40): the cache's writer stalled, as on a disk that has
# stopped taking writes (LmdbWriteLockHolder holds LMDB's write lock from another process; the
# daemon's reads go on), while 8 readers read the whole FILES-file dataset (default 4,000 of
# ~110 KB, 440 MB) from a local directory source through a mount with no RAM tier, every byte
# checked; the daemon's RSS is sampled every 0.1 s. Then the writer is let go. Prints per jar:
# seconds for the pass, wrong bytes, the daemon's RSS before and at its peak, what status says of
# disk writes, and the RSS after the pass.
# Usage: tests/bench/slow-disk-bench.sh [WORKDIR] (root; after mvn package and test-compile)
#   JARS="before=OLD.jar after=NEW.jar"; ARGS passes options to every mount, ARGS_<label> to that
#   side's only (e.g. ARGS_after="--write-queue 32M": an older jar has no such option).
set -euo pipefail
source "$(dirname "$(readlink -f "$0")")/lib.sh"
work=${1:-/tmp/hintfs-slow-disk-bench}
ds_files=${FILES:-4000}
make_dataset "$work/src"
mkdir -p "$work/mnt"
unmount_if_mounted "$work/mnt"
trap 'touch "$work/release"; unmount_if_mounted "$work/mnt"' EXIT
for side in ${JARS:-built=$root/fs/target/hintfs.jar}; do
  export HINTFS_JAR=${side#*=}
  label=${side%%=*}
  extra=ARGS_$label
  rm -rf "$work/cache" "$work/release"
  # shellcheck disable=SC2086 # ARGS are lists of options
  "$hintfs" mount "$work/src" "$work/mnt" --cache-dir "$work/cache" --ram-cache 0 \
    --no-detect-order ${ARGS:-} ${!extra:-} >/dev/null
  pid=$(pgrep -f -- "org.hintfs.*$work/mnt" | head -1)
  coproc HOLD { exec java --add-opens java.base/java.nio=ALL-UNNAMED \
    --add-opens java.base/sun.nio.ch=ALL-UNNAMED -cp "$HINTFS_JAR:$root/tests/target/test-classes" \
    org.hintfs.it.LmdbWriteLockHolder "$work/cache" 600 "$work/release"; }
  read -r held <&"${HOLD[0]}"
  [[ $held == held ]] || { echo "the write lock was not held" >&2; exit 1; }
  sync && echo 3 >/proc/sys/vm/drop_caches
  rss0=$(awk '/VmRSS/ {print $2}' /proc/"$pid"/status)
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
  touch "$work/release"
  wait "$HOLD_PID" 2>/dev/null || true
  sleep 2
  rss1=$(awk '/VmRSS/ {print $2}' /proc/"$pid"/status)
  "$hintfs" unmount "$work/mnt"
  printf '%s: %s files in %.1f s, wrong %s, RSS %d MiB -> peak %d MiB (%d MiB after the writer went on); %s\n' \
    "$label" "$ds_files" "$secs" "$wrong" $((rss0 / 1024)) $((peak / 1024)) $((rss1 / 1024)) "$(echo $writes)"
done
