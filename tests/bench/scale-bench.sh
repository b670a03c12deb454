#!/usr/bin/env bash
# Cached small files at scale: hintfs at ImageNet's shape. A local tree of 1,000 class directories of 1,281
# files of 256 B each (names like n00000007/n00000007_12.JPEG; 1,281,000 files), made once under
# /tmp/imagenet-shape (shared with other benchmarks: made under a lock, complete when its .complete
# marker is there). Side by side in one run, each build of hintfs (local backing, default options),
# bindfs (C, libfuse2, read-only passthrough) and ext4 (the tree itself):
#   mount s          the mount command's wall time (hintfs lists the tree then)
#   scan s           torchvision ImageFolder's scan of the whole tree
#   images/s         a DataLoader pass (4 workers, batch 256, RandomSampler seed 0, SAMPLES samples,
#                    raw bytes): the second of two identical passes, so the first filled the cache
#   CPU ms/1k opens  the file system process's utime + stime over that pass per 1,000 samples
#   third pass       images/s and CPU of a third identical pass: the second still pays for the
#                    first's reads (a READ invalidates the inode's atime, so each file is asked for
#                    its attributes once more) and for the JIT's last compilations; from the third
#                    on, every epoch of a run whose data stays in the page cache costs what it does
#   RSS MB           the daemon's VmRSS after mount / scan / the two passes
# Each hintfs row runs as setup.sh leaves a daemon: with its AOT cache (`hintfs aot-cache`, built for
# that row's jar, launcher and JVM options into WORK/aot-LABEL before its mount; on Java 25 it holds
# the training run's classes and method profiles, and the second pass's JIT work is what it cuts).
# AOT=0: rows without one (as the figures before 2026-11-27 were); BEFORE_AOT=0:
# the "before" row alone without one (BEFORE_JAR=<this jar> BEFORE_AOT=0: what the cache is worth).
#   GC pauses        over the measured pass's reads (-Xlog:gc*,safepoint into WORK/gc-LABEL.log):
#                    the longest and the 99th percentile GC pause (ms), how many, how many were
#                    full collections, the longest one's CPU ms (user + sys: on a loaded machine a
#                    pause's wall time is mostly its thread waiting for a core); the longest
#                    safepoint; and the longest over that run's ImageFolder scan and reads
# Builds: "this" is the checkout (mount-scripts/hintfs, fs/target/hintfs.jar, or THIS_JAR=JAR: a copy
# that a rebuild while the run waits for the lock does not change); BEFORE=DIR adds a
# "before" row from another checkout's launcher and jar (e.g. a worktree of the base commit,
# packaged), so its JVM options are its own; BEFORE_JAR=JAR adds a "before" row of another jar run by
# this checkout's launcher (a launcher unchanged since). SAMPLES (default 200000) makes a quick run smaller.
# Run under the bench lock: flock /tmp/hintfs-bench.lock tests/bench/scale-bench.sh [WORKDIR]
# Root (bindfs, drop_caches not needed: every pass but the first is a cached one). ~10 min.
set -euo pipefail
source "$(dirname "$(readlink -f "$0")")/lib.sh"
work=${1:-/tmp/hintfs-scale-bench}
tree=/tmp/imagenet-shape
samples=${SAMPLES:-200000}
py=(/usr/bin/python3 "$root/tests/bench/scale_pass.py")

make_imagenet_shape "$tree"
mkdir -p "$work/mnt"
unmount_if_mounted "$work/mnt"
trap 'unmount_if_mounted "$work/mnt"' EXIT

# passes DIR [FS_PID]: three passes over DIR, the second's and third's JSON on stdout joined by "@".
passes() {
  "${py[@]}" pass "$1" "$samples" "${2:-}" >/dev/null
  echo "$("${py[@]}" pass "$1" "$samples" "${2:-}")@$("${py[@]}" pass "$1" "$samples" "${2:-}")"
}

rows=()
# hintfs_row LABEL LAUNCHER JAR
hintfs_row() {
  local label=$1 launcher=$2 jar=$3 gclog=$work/gc-$1.log
  echo "scale-bench: $label" >&2
  local aot=0
  export HINTFS_AOT_DIR=$work/aot-$label
  rm -rf "$HINTFS_AOT_DIR" && mkdir -p "$HINTFS_AOT_DIR"
  if [[ ${AOT:-1} != 0 ]]; then
    # The same options as the mount's: the cache's name carries them, and only they get it.
    if HINTFS_JAR=$jar HINTFS_JAVA_OPTS="$(gc_log_opts "$gclog") ${EXTRA_JAVA_OPTS:-}" \
      "$launcher" aot-cache >&2; then
      aot=1
    else
      echo "scale-bench: $label runs without an AOT cache (its build failed)" >&2
    fi
  fi
  rm -rf "$work/cache-$label" "$gclog"
  local t0=$EPOCHREALTIME
  # shellcheck disable=SC2086 # MOUNT_ARGS is a list of options
  HINTFS_JAR=$jar HINTFS_JAVA_OPTS="$(gc_log_opts "$gclog") ${EXTRA_JAVA_OPTS:-}" "$launcher" mount \
    "$tree" "$work/mnt" --cache-dir "$work/cache-$label" --log-file "$work/daemon-$label.log" ${MOUNT_ARGS:-} >/dev/null
  local mount_s pid r1 r2 r3 scan pass lines
  mount_s=$(echo "$EPOCHREALTIME - $t0" | bc)
  pid=$(field pid <"$work/mnt/.hintfs/stats")
  r1=$(rss "$pid")
  scan=$("${py[@]}" scan "$work/mnt" | field scan_s)
  r2=$(rss "$pid")
  "${py[@]}" pass "$work/mnt" "$samples" >/dev/null
  lines=$(wc -l <"$gclog")
  pass=$("${py[@]}" pass "$work/mnt" "$samples" "$pid")
  r3=$(rss "$pid")
  local gc
  gc=$(gc_pauses "$gclog" "$lines" "$pass")
  pass+="@$("${py[@]}" pass "$work/mnt" "$samples" "$pid")"
  # HISTO=1: the live heap by class (a full GC, after the figures above) into WORK/histo-LABEL.txt
  if [[ -n ${HISTO:-} ]]; then jcmd "$pid" GC.class_histogram | head -25 >"$work/histo-$label.txt"; fi
  HINTFS_JAR=$jar "$launcher" unmount "$work/mnt"
  local shown=$label
  if ((aot)); then shown+=" (AOT cache)"; fi
  rows+=("$shown|$mount_s|$scan|$pass|$r1 / $r2 / $r3|$gc")
  unset HINTFS_AOT_DIR
  echo "$label: CPU s by thread over the pass: $(echo "${pass%@*}" | field threads)" >&2
}

# VARIANTS: rows of this checkout with options of their own, ";"-separated LABEL=OPTIONS: an
# option that starts with "--" goes to the mount with the word after it when that has no leading
# "-", the others to the JVM (e.g. "this;g1=-XX:-UseSerialGC -XX:+UseG1GC": the launcher's
# collector replaced; "this;t32=--fuse-threads 32": 32 FUSE readers at the least).
IFS=';' read -r -a variants <<<"${VARIANTS:-this}"
for v in "${variants[@]}"; do
  jvm='' MOUNT_ARGS='' prev=''
  if [[ $v == *=* ]]; then
    for o in ${v#*=}; do
      if [[ $o == --* || ($prev == --* && $o != -*) ]]; then MOUNT_ARGS+=" $o"; else jvm+=" $o"; fi
      prev=$o
    done
  fi
  EXTRA_JAVA_OPTS="${EXTRA_JAVA_OPTS:-} $jvm" hintfs_row "${v%%=*}" "$hintfs" "${THIS_JAR:-$root/fs/target/hintfs.jar}"
done
MOUNT_ARGS=''
if [[ -n ${BEFORE:-} ]]; then
  hintfs_row before "$BEFORE/mount-scripts/hintfs" "$BEFORE/fs/target/hintfs.jar"
fi
if [[ -n ${BEFORE_JAR:-} ]]; then
  AOT=${BEFORE_AOT:-${AOT:-1}} EXTRA_JAVA_OPTS="${EXTRA_JAVA_OPTS:-} ${BEFORE_OPTS:-}" \
    hintfs_row before "$hintfs" "$BEFORE_JAR"
fi

bindfs -f -r "$tree" "$work/mnt" &
bpid=$!
for _ in $(seq 100); do [[ -d $work/mnt/n00000000 ]] && break; sleep 0.1; done
scan=$("${py[@]}" scan "$work/mnt" | field scan_s)
pass=$(passes "$work/mnt" "$bpid")
rows+=("bindfs|-|$scan|$pass|$(rss "$bpid")|-")
echo "bindfs: CPU s by thread over the pass: $(echo "${pass%@*}" | field threads)" >&2
umount "$work/mnt"
wait "$bpid" || true

scan=$("${py[@]}" scan "$tree" | field scan_s)
rows+=("ext4|-|$scan|$(passes "$tree")|-|-")

/usr/bin/python3 - "$samples" "${rows[@]}" <<'PY'
import json, sys
samples = int(sys.argv[1])
rows = [r.split("|") for r in sys.argv[2:]]
ref = {r[0]: [json.loads(x) for x in r[3].split("@")] for r in rows}
b, e = ref["bindfs"], ref["ext4"]
print("%d samples per pass, %d files" % (samples, 1281000))
print("| fs | mount s | ImageFolder scan s | cached pass images/s | x bindfs | x ext4 "
      "| CPU ms / 1,000 opens | x bindfs | third pass images/s | x bindfs | CPU ms / 1,000 opens | x bindfs "
      "| RSS MB after mount / scan / passes | GC pauses in the second pass's reads: max / p99 ms (n, full; CPU ms of the max) |")
print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
cpu = lambda p: p["cpu_s"] * 1000 * 1000 / samples
for label, mount, scan, _, rss, gc in rows:
    cells = []
    for i, p in enumerate(ref[label]):
        cells += ["%.0f" % p["images_per_s"], "%.2f" % (p["images_per_s"] / b[i]["images_per_s"])]
        if i == 0:
            cells.append("%.2f" % (p["images_per_s"] / e[0]["images_per_s"]))
        cells += ["-", "-"] if label == "ext4" else ["%.1f" % cpu(p), "%.2f" % (cpu(p) / cpu(b[i]))]
    print("| %s | %s | %.1f | %s | %s | %s |" % (
        label, mount if mount == "-" else "%.1f" % float(mount), float(scan), " | ".join(cells), rss, gc))
PY
