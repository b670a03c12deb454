#!/usr/bin/env bash
# Large files: what a large file's first read costs the whole machine, by filesystem: CPU seconds per
# GiB read, beside MB/s. On this project's 2-core VM the source (S3Proxy), the delaying proxy, the
# filesystem and the kernel share the cores, and a first read's MB/s swings by a third between
# rounds (large-file-bench.sh); the CPU it took per GiB swings much less, and it is what decides
# the MB/s of a node whose cores are the bound.
# Dataset: large-file-bench.sh's (one 1 GiB file and 8 shards of 128 MiB under n00000000/, made in
# WORKDIR/src if absent). Per round, endpoint (S3Proxy direct, then a fresh DelayProxy 10 ms in
# front of it) and filesystem (FS_LIST, default "hintfs rclone s3fs"; the order reversed every
# other round): a fresh mount with an empty cache, the page cache dropped, then the READERS' first
# read (8: the 8 shards by 8 dd at once; 1: the 1 GiB file by one dd, bs=1M). Counted over the read
# alone, from /proc: the machine's CPU s (user, nice, system, irq and softirq of /proc/stat; not
# idle, not iowait), the filesystem's process, S3Proxy's and the DelayProxy's.
# hintfs runs as setup.sh leaves it: its jar's AOT cache built first into WORKDIR/aot-cpu (AOT=0:
# none). Prints every pass, then the medians per endpoint and filesystem with hintfs's ratios.
# Env: HINTFS_JAR (default the build's), HINTFS_OPTS (mount options), FS_LIST, READERS (8),
# ROUNDS (3), S3_DELAY_MS (10).
# Usage: tests/bench/large-cpu-bench.sh [WORKDIR] (root; after mvn package and test-compile)
set -euo pipefail
source "$(dirname "$(readlink -f "$0")")/lib.sh"
work=${1:-/tmp/hintfs-largebench}
fs_list=${FS_LIST:-hintfs rclone s3fs}
readers=${READERS:-8} rounds=${ROUNDS:-3}
mib=1048576
make_large_dataset "$work"
mkdir -p "$work/mnt"
export HINTFS_JAR=${HINTFS_JAR:-$root/fs/target/hintfs.jar}
export HINTFS_AOT_DIR=$work/aot-cpu
rm -rf "$HINTFS_AOT_DIR" && mkdir -p "$HINTFS_AOT_DIR"
if [[ ${AOT:-1} != 0 ]]; then "$hintfs" aot-cache >&2 || echo "large-cpu-bench: hintfs runs without an AOT cache" >&2; fi
s3_start "$work"
trap 's3_stop "$work"; [[ -z ${gpid:-} ]] || kill "$gpid" 2>/dev/null || true' EXIT
# S3Proxy's JIT, for whole objects and for ranged GETs of 8 MiB (hintfs's and s3fs's), so that the
# first pass of round 1 does not pay it
for _ in 1 2 3; do rclone cat s3p:bench/ds/n00000000/big.bin >/dev/null; done
for i in $(seq 0 8 127); do
  warm=() # not a bare wait: S3Proxy and the DelayProxy are children too
  for j in $(seq "$i" $((i + 7))); do
    rclone cat --offset $((j * 8 * mib)) --count $((8 * mib)) s3p:bench/ds/n00000000/big.bin >/dev/null &
    warm+=($!)
  done
  wait "${warm[@]}"
done

# machine: the machine's busy CPU ticks so far. ticks PID: a process's (user + system, all threads).
machine() { awk '/^cpu / { print $2 + $3 + $4 + $7 + $8 }' /proc/stat; }
ticks() { if [[ -n $1 && -r /proc/$1/stat ]]; then awk '{ print $14 + $15 }' "/proc/$1/stat"; else echo 0; fi; }
hz=$(getconf CLK_TCK)
read_first() {
  local pids=() f
  if [[ $readers == 8 ]]; then
    for i in 0 1 2 3 4 5 6 7; do dd if="$work/mnt/n00000000/shard-$i.tar" of=/dev/null bs=1M status=none & pids+=($!); done
  else
    dd if="$work/mnt/n00000000/big.bin" of=/dev/null bs=1M status=none & pids+=($!)
  fi
  wait "${pids[@]}"
}
fs_pid() {
  case $1 in
    hintfs) pgrep -f "java.*$work/mnt" ;;
    rclone) pgrep -f "rclone mount .*$work/mnt" ;;
    *) pgrep -n -x "$1" ;; # the newest: the daemon s3fs forks, not its parent
  esac | head -1 || true
}
results=$work/cpu-results.tsv
: >"$results"
: >"$work/cpu-warmup.tsv"
# round 0: one pass of each filesystem, direct, not counted (the first pass of a run read a fifth to
# a third slower than the rest, whichever filesystem it was, and S3Proxy took more CPU for it)
for r in $(seq 0 "$rounds"); do
  order=$fs_list
  if ((r % 2 == 0)); then order=$(printf '%s\n' $fs_list | tac | tr '\n' ' '); fi
  for ep in direct 10ms; do
    [[ $r != 0 || $ep == direct ]] || continue
    for fs in $order; do
      [[ $fs == hintfs ]] || command -v "$fs" >/dev/null || { echo "$fs is not installed: skipped" >&2; continue; }
      rm -rf "$work/cache"
      p=$port gpid=
      if [[ $ep == 10ms ]]; then gproxy_start; p=$gport; fi
      export RCLONE_CONFIG_S3G_TYPE=s3 RCLONE_CONFIG_S3G_PROVIDER=Other RCLONE_CONFIG_S3G_ACCESS_KEY_ID=$key \
        RCLONE_CONFIG_S3G_SECRET_ACCESS_KEY=$secret RCLONE_CONFIG_S3G_ENDPOINT=http://127.0.0.1:$p \
        RCLONE_CONFIG_S3G_FORCE_PATH_STYLE=true
      if [[ $fs == hintfs ]]; then
        # shellcheck disable=SC2086 # options, split on purpose
        mount_fs hintfs "$p" s3g "$work/mnt" "$work/cache" ${HINTFS_OPTS:-}
      else
        mount_fs "$fs" "$p" s3g "$work/mnt" "$work/cache"
      fi
      fpid=$(fs_pid "$fs")
      [[ -n $fpid ]] || echo "large-cpu-bench: no process of $fs found: its column counts 0" >&2
      drop
      sleep 2 # the drop's own work done before the count starts
      m0=$(machine) f0=$(ticks "$fpid") s0=$(ticks "$s3pid") g0=$(ticks "$gpid") t0=$EPOCHREALTIME
      read_first
      t1=$EPOCHREALTIME m1=$(machine) f1=$(ticks "$fpid") s1=$(ticks "$s3pid") g1=$(ticks "$gpid")
      unmount_fs "$fs" "$work/mnt"
      if [[ $ep == 10ms ]]; then gproxy_stop; gpid=; fi
      out=$results
      if [[ $r == 0 ]]; then out=$work/cpu-warmup.tsv; fi
      /usr/bin/python3 - "$ep" "$fs" "$t0" "$t1" $((m1 - m0)) $((f1 - f0)) $((s1 - s0)) $((g1 - g0)) "$hz" >>"$out" <<'PY'
import sys
ep, fs, t0, t1, m, f, s, g, hz = sys.argv[1:]
secs, hz = float(t1) - float(t0), int(hz)
# the read is 1 GiB in either case: CPU s per GiB are the CPU s counted
print("\t".join([ep, fs, "%.0f" % (1073741824 / 1e6 / secs)] + ["%.2f" % (int(x) / hz) for x in (m, f, s, g)]))
PY
      echo "round $r $(tail -1 "$out" | tr '\t' ' ')$([[ $r != 0 ]] || echo " (not counted)")" >&2
    done
  done
done
/usr/bin/python3 - "$results" "$readers" "$rounds" <<'PY'
import collections, statistics, sys
rows = collections.defaultdict(list)
for line in open(sys.argv[1]):
    ep, fs, *v = line.split("\t")
    rows[(ep, fs)].append([float(x) for x in v])
print("First read of 1 GiB by %s reader(s), a fresh mount each, %s rounds: MB/s and CPU s per GiB (medians; each pass in brackets)" % (sys.argv[2], sys.argv[3]))
print()
print("| endpoint | filesystem | MB/s | machine CPU s / GiB | the filesystem's | S3Proxy's | DelayProxy's | MB/s / hintfs's | machine CPU / hintfs's |")
print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
for ep in ("direct", "10ms"):
    base = rows.get((ep, "hintfs"))
    for (e, fs), v in rows.items():
        if e != ep:
            continue
        med = [statistics.median(c) for c in zip(*v)]
        cols = ["%.0f (%s)" % (med[0], ", ".join("%.0f" % x[0] for x in v))]
        cols += ["%.2f (%s)" % (med[i], ", ".join("%.2f" % x[i] for x in v)) for i in (1, 2, 3)]
        cols += ["%.2f" % med[4] if ep == "10ms" else "-"]
        if base:
            b = [statistics.median(c) for c in zip(*base)]
            cols += ["%.2fx" % (med[0] / b[0]), "%.2fx" % (med[1] / b[1])]
        else:
            cols += ["-", "-"]
        print("| %s | %s | %s |" % ("10 ms away" if ep == "10ms" else ep, fs, " | ".join(cols)))
PY
