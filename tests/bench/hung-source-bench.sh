#!/usr/bin/env bash
# Cached reads while the source hangs: the 2,000-file dataset on S3Proxy behind DelayProxy
# (S3_DELAY_MS, default 10), mounted by hintfs with a cache that holds it all; the first half of the
# class directories prefetched (`hintfs prefetch`), the rest left uncached. hung_source.py then reads
# cached files with READERS threads (default 4) for SECONDS (default 10) with the source answering,
# and again with S3Proxy stopped (SIGSTOP: connections stay open, nothing answers) while MISSERS
# threads (default 40) read uncached files; it times an os.walk of the mount and a read of
# .hintfs/stats during the hang, continues the source and checks every byte read.
# Usage: tests/bench/hung-source-bench.sh [WORKDIR] (root; after mvn package)
#   JARS="before=OLD.jar after=NEW.jar" measures each jar in turn in every run (default: the built
#   one); each JSON line starts with its label.
#   ARGS="--fuse-threads 32" passes options to the mount; RUNS=3 repeats the measurement;
#   NO_STOP=1 leaves the source answering while the missers read (S3_DELAY_MS=50 MISSERS=64: many
#   misses on a healthy source far away).
set -euo pipefail
source "$(dirname "$(readlink -f "$0")")/lib.sh"
work=${1:-/tmp/hintfs-hung-bench}
make_dataset "$work/src"
mkdir -p "$work/mnt"
unmount_if_mounted "$work/mnt"
s3_start "$work"
trap 's3_stop "$work"' EXIT
S3_WARM=${S3_WARM:-3} s3_warm "$work"
half=$(ls "$work/src" | sort | head -n $(( $(ls "$work/src" | wc -l) / 2 )))
for run in $(seq "${RUNS:-1}"); do
  for side in ${JARS:-built=$root/fs/target/hintfs.jar}; do
  export HINTFS_JAR=${side#*=}
  echo "run $run, ${side%%=*} (${HINTFS_JAR})" >&2
  rm -rf "$work/cache"
  # shellcheck disable=SC2086 # ARGS is a list of options
  mount_fs hintfs "$pport" s3x "$work/mnt" "$work/cache" --cache-size 100% ${ARGS:-}
  (cd "$work/mnt" && "$hintfs" prefetch --quiet $half)
  sync && echo 3 >/proc/sys/vm/drop_caches
  printf '%s ' "${side%%=*}"
  /usr/bin/python3 "$root/tests/bench/hung_source.py" "$work/mnt" "$work/src" "$s3pid" \
    --seconds "${SECONDS_PER_PHASE:-10}" --missers "${MISSERS:-40}" \
    --cached-readers "${READERS:-4}" ${NO_STOP:+--no-stop} || echo "run $run: checks failed" >&2
  "$hintfs" unmount "$work/mnt"
  done
done
