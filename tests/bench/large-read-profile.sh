#!/usr/bin/env bash
# Issue 38 profile: where a hintfs daemon's CPU goes over one large file's first read, by thread
# (from /proc) and by frame (async-profiler, loaded into the running daemon through jcmd, so that
# Java frames are named even while interpreted: perf names none of those). S3Proxy on loopback,
# direct; the dataset of large-file-bench.sh (1 GiB file and 8 shards of 128 MiB, made here if
# WORKDIR has none). Per round: a fresh mount with an empty cache; unless FRESH=1, the 8 shards are
# read first (a warm mount: JIT and the RAM tier's first fill done); the page cache dropped; the
# 1 GiB file read by dd bs=1M with the profiler on. READERS=8: the other way round, the 1 GiB file
# read first and the 8 shards by 8 dd at once with the profiler on.
# Prints per round: MB/s, the daemon's CPU s by thread, the profile's share by thread, its top
# frames by self time, and the Java methods that hold the most samples. Keeps the stacks in
# WORKDIR/profile-N.collapsed (one line per stack, for flame graphs).
# async-profiler 4.1 (linux-x64) comes from Maven Central on first use into WORKDIR/async-profiler
# (not a dependency of hintfs). The daemon runs as setup.sh leaves it (its jar's AOT cache, built
# into WORKDIR/aot first).
# On a VM whose host backs memory lazily (this project's: virtio-balloon free page reporting), a
# first touch of memory faults on the host, unseen by the guest's timers: the profile misses that
# time and /proc's per-thread CPU counts it (the LMDB writer: 0.38 s sampled, 1.57 s in /proc,
# BENCHMARKS.md, tenth stop). Read the two side by side.
# AWAY=1: the source behind a fresh DelayProxy per round (S3_DELAY_MS, default 10), as
# large-file-bench.sh's "10 ms away".
# Env: HINTFS_JAR (default the build's), ROUNDS (1), FRESH (0), READERS (1 or 8), AWAY (0), TOP (20).
# Usage: tests/bench/large-read-profile.sh [WORKDIR] (root; after mvn package and test-compile)
set -euo pipefail
source "$(dirname "$(readlink -f "$0")")/lib.sh"
work=${1:-/tmp/hintfs-largebench}
rounds=${ROUNDS:-1} top=${TOP:-20}
make_large_dataset "$work"
ap=$work/async-profiler/linux-x64/libasyncProfiler.so
if [[ ! -f $ap ]]; then
  mvn -B -q dependency:copy -Dartifact=tools.profiler:async-profiler:4.1:jar:linux-x64 \
    -DoutputDirectory="$work/async-profiler" >&2
  (cd "$work/async-profiler" && unzip -o -q async-profiler-4.1-linux-x64.jar)
fi
[[ -f $ap ]] || { echo "large-read-profile: no async-profiler at $ap" >&2; exit 1; }
export HINTFS_JAR=${HINTFS_JAR:-$root/fs/target/hintfs.jar}
rm -rf "$work/aot" && mkdir -p "$work/aot" "$work/mnt"
export HINTFS_AOT_DIR=$work/aot
"$hintfs" aot-cache >&2 || echo "large-read-profile: no AOT cache (its build failed)" >&2
unmount_if_mounted "$work/mnt"
s3_start "$work"
trap 'unmount_if_mounted "$work/mnt"; s3_stop "$work"; [[ -z ${gpid:-} ]] || kill "$gpid" 2>/dev/null || true' EXIT
for _ in 1 2 3; do rclone cat s3p:bench/ds/n00000000/big.bin >/dev/null; done # S3Proxy's JIT

# threads PID OUT [BEFORE]: each thread's CPU ticks into OUT (JSON); with BEFORE, prints the CPU s
# since then by thread name (numbers stripped: fuse-3 counts as fuse).
threads() {
  /usr/bin/python3 - "$@" <<'PY'
import collections, json, os, re, sys
pid, out = sys.argv[1], {}
for t in os.listdir(f"/proc/{pid}/task"):
    try:
        s = open(f"/proc/{pid}/task/{t}/stat").read()
    except OSError:
        continue
    f = s[s.rindex(")") + 2:].split()
    cs = sum(int(l.split()[1]) for l in open(f"/proc/{pid}/task/{t}/status") if "ctxt_switches" in l)
    out[t] = (s[s.index("(") + 1:s.rindex(")")], int(f[11]) + int(f[12]), cs)
json.dump(out, open(sys.argv[2], "w"))
if len(sys.argv) > 3:
    before, by, cs = json.load(open(sys.argv[3])), collections.Counter(), collections.Counter()
    for t, (name, ticks, n) in out.items():
        b = before.get(t, [name, 0, 0])
        by[re.sub(r"[-#]?\d+$", "", name)] += (ticks - b[1]) / os.sysconf("SC_CLK_TCK")
        cs[re.sub(r"[-#]?\d+$", "", name)] += n - b[2]
    print("daemon CPU s %.2f: %s" % (sum(by.values()), ", ".join("%s %.2f" % kv for kv in by.most_common(8) if kv[1] >= 0.01)))
    print("context switches %d: %s" % (sum(cs.values()), ", ".join("%s %d" % kv for kv in cs.most_common(6))))
PY
}

for r in $(seq "$rounds"); do
  rm -rf "$work/cache"
  p=$port
  if [[ ${AWAY:-0} == 1 ]]; then gproxy_start; p=$gport; fi
  mount_fs hintfs "$p" s3p "$work/mnt" "$work/cache"
  pid=$(pgrep -f "java.*$work/mnt" | head -1)
  jcmd=$(dirname "$(readlink -f "/proc/$pid/exe")")/jcmd
  shards=("$work"/mnt/n00000000/shard-{0..7}.tar)
  big=$work/mnt/n00000000/big.bin
  if [[ ${READERS:-1} == 8 ]]; then warm=("$big") measured=("${shards[@]}"); else
    warm=("${shards[@]}") measured=("$big"); fi
  if [[ ${FRESH:-0} != 1 ]]; then
    for f in "${warm[@]}"; do dd if="$f" of=/dev/null bs=1M status=none; done
  fi
  drop
  out=$work/profile-$r.collapsed
  # jcmd takes name=value pairs: the profiler's options go as one quoted argument.
  "$jcmd" "$pid" JVMTI.agent_load "$ap" '"start,event=cpu,interval=1ms,threads"' >/dev/null
  threads "$pid" "$work/t0.json"
  t0=$EPOCHREALTIME
  pids=()
  for f in "${measured[@]}"; do dd if="$f" of=/dev/null bs=1M status=none & pids+=($!); done
  wait "${pids[@]}" # not S3Proxy's
  t1=$EPOCHREALTIME
  cpu=$(threads "$pid" "$work/t1.json" "$work/t0.json")
  "$jcmd" "$pid" JVMTI.agent_load "$ap" "\"stop,collapsed,threads,file=$out\"" >/dev/null
  "$hintfs" unmount "$work/mnt"
  if [[ ${AWAY:-0} == 1 ]]; then gproxy_stop; fi
  echo "round $r ($([[ ${FRESH:-0} == 1 ]] && echo "a fresh mount" || echo "a warm mount"), ${#measured[@]} reader(s)): first read $(/usr/bin/python3 -c "print(round(1073741824 / 1e6 / ($t1 - $t0)))") MB/s"
  echo "$cpu"
  /usr/bin/python3 - "$out" "$top" <<'PY'
import collections, re, sys
total, thread, leaf, method = 0, collections.Counter(), collections.Counter(), collections.Counter()
for line in open(sys.argv[1]):
    stack, n = line.rstrip().rsplit(" ", 1)
    n, frames = int(n), stack.split(";")
    total += n
    thread[re.sub(r"[-#]?\d+$", "", re.sub(r" tid=\d+", "", frames[0]).strip("[]"))] += n
    leaf[frames[-1]] += n
    for f in set(frames[1:]):
        if "/" in f and "." in f:  # a Java method (package/Class.method)
            method[f] += n
print("profile: %d samples; by thread: %s" % (total, ", ".join("%s %.1f%%" % (t, 100 * c / total) for t, c in thread.most_common(6))))
k = int(sys.argv[2])
print("self time:")
for f, c in leaf.most_common(k):
    print("  %5.1f%%  %s" % (100 * c / total, f[:120]))
print("held by (a method and all it calls), past the threads' loops:")
shown = 0
for f, c in method.most_common():
    if re.search(r"Thread\.run|runWorker|Worker\.run|\$\$Lambda", f):
        continue
    print("  %5.1f%%  %s" % (100 * c / total, f[:120]))
    shown += 1
    if shown == k:
        break
PY
done
