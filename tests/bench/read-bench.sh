#!/usr/bin/env bash
# Issue 2 benchmark: read every file of a ~2,000-file dataset (~110 KB each, varied) in random
# order with 1 and 8 threads, through a hintfs mount and directly from the source directory,
# page cache dropped before the cold pass, then a warm pass. Median of REPS runs; prints a
# Markdown table of files/s and the mount/source ratio.
# Usage: tests/bench/read-bench.sh [WORKDIR] (root: it writes /proc/sys/vm/drop_caches)
set -euo pipefail
root=$(cd "$(dirname "$(readlink -f "$0")")/../.." && pwd)
work=${1:-/tmp/hintfs-bench}
reps=${REPS:-3}
hintfs="$root/mount-scripts/hintfs"
bench="$root/tests/bench/ReadBench.java"
mkdir -p "$work/mnt"
if [[ ! -d $work/src ]]; then
  /usr/bin/python3 - "$work/src" <<'PY'
import os, random, sys
rnd = random.Random(2)
for i in range(2000):
    d = os.path.join(sys.argv[1], "n%08d" % (i % 20))
    os.makedirs(d, exist_ok=True)
    size = max(1000, int(rnd.gauss(110_000, 30_000)))
    with open(os.path.join(d, "img_%05d.JPEG" % i), "wb") as f:
        f.write(os.urandom(size))
PY
fi
grep -q " $work/mnt " /proc/self/mountinfo && "$hintfs" unmount "$work/mnt"
"$hintfs" mount "$work/src" "$work/mnt" >/dev/null
trap '"$hintfs" unmount "$work/mnt"' EXIT
# Compile once (the source launcher would recompile every run).
mkdir -p "$work/classes" && javac -d "$work/classes" "$bench"
run() { java -cp "$work/classes" ReadBench "$1" "$2" "$3" | cut -d' ' -f1; }
drop() { sync; echo 3 >/proc/sys/vm/drop_caches; }
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

echo "| threads | pass | source files/s | mount files/s | mount/source |"
echo "| --- | --- | --- | --- | --- |"
for threads in 1 8; do
  declare -a sc=() mc=() sw=() mw=()
  for ((r = 0; r < reps; r++)); do
    seed=$((r + 1))
    drop; sc+=("$(run "$work/src" "$threads" "$seed")"); sw+=("$(run "$work/src" "$threads" "$((seed + 100))")")
    drop; mc+=("$(run "$work/mnt" "$threads" "$seed")"); mw+=("$(run "$work/mnt" "$threads" "$((seed + 100))")")
  done
  for pass in cold warm; do
    if [[ $pass == cold ]]; then s=$(median "${sc[@]}"); m=$(median "${mc[@]}"); else s=$(median "${sw[@]}"); m=$(median "${mw[@]}"); fi
    printf '| %s | %s | %.0f | %.0f | %.2f |\n' "$threads" "$pass" "$s" "$m" "$(echo "$m / $s" | bc -l)"
  done
done
