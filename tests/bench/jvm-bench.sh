#!/usr/bin/env bash
# Issue 26: a fresh daemon's first pass over a cached dataset, by JVM and AOT cache. Each row: the
# cache full (LMDB), the page cache dropped, a new daemon started, then one pass of the 2,000 files
# with THREADS readers; beside it in the same round, the same files read from the source directory
# (ext4) after the same drop, and a second pass through the same daemon after another drop (the
# warm daemon: JIT done, page cache cold).
#   start to first byte: from `hintfs mount` to the first file read whole through the mount
#   fresh: files/s of the new daemon's first pass; warm: of its second
# Between the first byte and the fresh pass, a trainer's start: `import torch, torchvision` in
# /usr/bin/python3 (NO_TRAINER_START=1 leaves it out; the warm-up at mount has already stopped at
# the first byte's open, a reader's), then
# the page cache is dropped again with the daemon's LMDB map paged out (lib.sh's drop): both
# passes read the cache from the disk, as ext4's does.
# Rows: Java 17 and Java 25, each without and with the cache `hintfs aot-cache` built (25: the AOT
# cache, JEP 483/514/515; 17: an AppCDS archive).
# Usage: tests/bench/jvm-bench.sh [WORKDIR] (root: it writes /proc/sys/vm/drop_caches)
set -euo pipefail
source "$(dirname "$(readlink -f "$0")")/lib.sh"
work=${1:-/tmp/hintfs-jvm-bench}
reps=${REPS:-3}
threads=${THREADS:-8}
j17=${JAVA17:-/usr/lib/jvm/java-17-openjdk-amd64}
j25=${JAVA25:-/usr/lib/jvm/temurin-25-jdk-amd64}
make_dataset "$work/src"
compile_reader "$work"
mkdir -p "$work/mnt" "$work/aot"
unmount_if_mounted "$work/mnt"
trap 'unmount_if_mounted "$work/mnt"' EXIT
first=$(cd "$work/src" && find . -type f | sort | sed -n 1p)
export HINTFS_AOT_DIR=$work/aot
HINTFS_AOT=0 JAVA=$j17/bin/java fill_cache "$work"
JAVA=$j17/bin/java "$hintfs" aot-cache >&2
JAVA=$j25/bin/java "$hintfs" aot-cache >&2

# pass JDK AOT(0|1): "ms_to_first_byte fresh_files_per_s warm_files_per_s"
pass() {
  drop
  local t0 t1 fresh warm
  t0=$(date +%s%N)
  HINTFS_AOT=$2 JAVA=$1/bin/java "$hintfs" mount "$work/src" "$work/mnt" --cache-dir "$work/cache" >/dev/null
  cat "$work/mnt/$first" >/dev/null
  t1=$(date +%s%N)
  [[ -n ${NO_TRAINER_START:-} ]] || /usr/bin/python3 -c 'import torch, torchvision'
  drop
  fresh=$(run "$work/mnt" "$threads" 7)
  drop
  warm=$(run "$work/mnt" "$threads" 8)
  HINTFS_AOT=$2 JAVA=$1/bin/java "$hintfs" unmount "$work/mnt"
  echo "$(((t1 - t0) / 1000000)) $fresh $warm"
}

declare -A ms fr wa
names=("Java 17" "Java 17 + AppCDS" "Java 25" "Java 25 + AOT cache")
src=()
for ((r = 0; r < reps; r++)); do
  drop; src+=("$(run "$work/src" "$threads" 7)")
  for n in "${names[@]}"; do
    case $n in
      "Java 17") out=$(pass "$j17" 0) ;;
      "Java 17 + AppCDS") out=$(pass "$j17" 1) ;;
      "Java 25") out=$(pass "$j25" 0) ;;
      *) out=$(pass "$j25" 1) ;;
    esac
    read -r a b c <<<"$out"
    ms[$n]+="$a " fr[$n]+="$b " wa[$n]+="$c "
  done
done
s=$(median "${src[@]}")
echo "| JVM | start to first byte, ms | fresh daemon files/s | /ext4 | warm daemon files/s | /ext4 |"
echo "| --- | --- | --- | --- | --- | --- |"
for n in "${names[@]}"; do
  # shellcheck disable=SC2086
  m=$(median ${ms[$n]}) f=$(median ${fr[$n]}) w=$(median ${wa[$n]})
  printf '| %s | %.0f | %.0f | %.2f | %.0f | %.2f |\n' "$n" "$m" "$f" "$(ratio "$f" "$s")" "$w" \
    "$(ratio "$w" "$s")"
done
echo "ext4 (the source directory, page cache dropped): $(printf '%.0f' "$s") files/s, $threads threads, median of $reps"
[[ -n ${NO_TRAINER_START:-} ]] || echo "(import torch, torchvision between each mount's first byte and its fresh pass)"
