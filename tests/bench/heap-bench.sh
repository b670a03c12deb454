#!/usr/bin/env bash
# Issue 26: the daemon's heap and RSS at ImageNet-1k's 1,281,167 files on Java 17, Java 25 and
# Java 25 with -XX:+UseCompactObjectHeaders. A local tree of empty files (1,000 classes, names
# like train/n01440764/n01440764_10000.JPEG; made once, ~20 s) is listed at mount, then `find`
# walks the mount. Catalog: the stats' catalog_heap_bytes; heap: used after a full GC (jcmd
# GC.run, GC.heap_info); RSS: the daemon's VmRSS. Root, after mvn package, with both JDKs in
# /usr/lib/jvm. About 25 s a row.
# Usage: tests/bench/heap-bench.sh [RUNS] [DIR]   (DIR: where the tree goes)
set -euo pipefail
source "$(dirname "$(readlink -f "$0")")/lib.sh"
runs=${1:-2}
dir=${2:-/tmp/hintfs-heap-bench}
jdk17=${JDK17:-/usr/lib/jvm/java-17-openjdk-amd64}
jdk25=${JDK25:-/usr/lib/jvm/temurin-25-jdk-amd64}
if [[ ! -d $dir/src/train ]]; then
  mkdir -p "$dir/src/train"
  /usr/bin/python3 - "$dir/src/train" <<'PY'
import os, sys
n, classes = 1281167, 1000
for c in range(classes):
    d = os.path.join(sys.argv[1], "n%08d" % (1440764 + c))
    os.mkdir(d)
    for i in range(n // classes + (1 if c < n % classes else 0)):
        os.close(os.open("%s/n%08d_%d.JPEG" % (d, 1440764 + c, 10000 + i), os.O_CREAT | os.O_WRONLY, 0o644))
PY
fi
mnt=$dir/mnt
mkdir -p "$mnt"
unmount_if_mounted "$mnt"

# heap_used JDK PID: MB used after a full GC.
heap_used() {
  "$1/bin/jcmd" "$2" GC.run >/dev/null
  "$1/bin/jcmd" "$2" GC.heap_info |
    awk '/^ *(def new generation|tenured generation|DefNew|Tenured)/ {
      for (i = 1; i <= NF; i++) if ($i == "used") { u = $(i + 1); sub("K,", "", u); s += u } }
      END { printf "%d", s / 1024 }'
}
rss() { awk '/VmRSS/ { printf "%d", $2 / 1024 }' "/proc/$1/status"; }
stat_field() { /usr/bin/python3 -c "import json,sys; print(json.load(open('$mnt/.hintfs/stats'))['$1'])"; }

echo "| Java | flags | catalog B/file | heap after GC, MB | B/file | RSS after mount, MB | RSS after find, MB | mount s |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- |"
for run in $(seq "$runs"); do
  for kase in "17|$jdk17|" "25|$jdk25|" "25|$jdk25|-XX:+UseCompactObjectHeaders"; do
    IFS='|' read -r label jdk flags <<<"$kase"
    rm -rf "$dir/cache"
    t0=$(date +%s.%N)
    JAVA=$jdk/bin/java HINTFS_JAVA_OPTS="$flags" "$hintfs" mount "$dir/src" "$mnt" \
      --cache-dir "$dir/cache" --log-file "$dir/daemon.log" >/dev/null
    t1=$(date +%s.%N)
    pid=$(stat_field pid)
    files=$(stat_field files)
    cat=$(stat_field catalog_heap_bytes)
    rss1=$(rss "$pid")
    find "$mnt" -type f | wc -l >/dev/null
    heap=$(heap_used "$jdk" "$pid")
    rss2=$(rss "$pid")
    "$hintfs" unmount "$mnt" >/dev/null
    printf '| %s | %s | %.1f | %d | %.0f | %d | %d | %.1f |\n' "$label" "${flags:-}" \
      "$(echo "$cat / $files" | bc -l)" "$heap" "$(echo "$heap * 1048576 / $files" | bc -l)" \
      "$rss1" "$rss2" "$(echo "$t1 - $t0" | bc -l)"
  done
done
