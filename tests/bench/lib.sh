# Shared helpers of the benchmark scripts (sourced, not run).
root=$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/../.." && pwd)
hintfs="$root/mount-scripts/hintfs"

# make_dataset DIR: FILES files (default 2,000) of ~110 KB (Gaussian, sd 30 KB) in 20 class
# directories. A DIR already there is kept as it is: give another size its own WORKDIR.
ds_files=${FILES:-2000}
make_dataset() {
  [[ -d $1 ]] && return 0
  /usr/bin/python3 - "$1" "$ds_files" <<'PY'
import os, random, sys
rnd = random.Random(2)
for i in range(int(sys.argv[2])):
    d = os.path.join(sys.argv[1], "n%08d" % (i % 20))
    os.makedirs(d, exist_ok=True)
    size = max(1000, int(rnd.gauss(110_000, 30_000)))
    with open(os.path.join(d, "img_%05d.JPEG" % i), "wb") as f:
        f.write(os.urandom(size))
PY
}

# make_large_dataset WORK: the large-file benchmarks' dataset in WORK/src, one 1 GiB file and 8
# shards of 128 MiB (random bytes) under n00000000/, unless WORK/src is there already.
make_large_dataset() {
  [[ -d $1/src ]] && return 0
  mkdir -p "$1/src/n00000000"
  head -c $((1024 << 20)) /dev/urandom >"$1/src/n00000000/big.bin"
  for i in 0 1 2 3 4 5 6 7; do head -c $((128 << 20)) /dev/urandom >"$1/src/n00000000/shard-$i.tar"; done
}

# compile_reader WORKDIR: ReadBench compiled once (the source launcher recompiles every run).
compile_reader() {
  mkdir -p "$1/classes" && javac -d "$1/classes" "$root/tests/bench/ReadBench.java"
  reader_cp="$1/classes"
}

# fill_cache WORK: WORK/cache filled with every file of WORK/src by one pass through a mount at
# WORK/mnt, unless it is there already (kept between runs: remove it when the dataset changes).
fill_cache() {
  if [[ ! -d $1/cache ]]; then
    "$hintfs" mount "$1/src" "$1/mnt" --cache-dir "$1/cache" >/dev/null
    run "$1/mnt" 8 0 >/dev/null
    "$hintfs" unmount "$1/mnt"
  fi
}

# run DIR THREADS SEED: files/s of one pass over DIR.
run() { java -cp "$reader_cp" ReadBench "$1" "$2" "$3" | cut -d' ' -f1; }

# drop: the page cache dropped, and every process's LMDB map (a hintfs daemon's) paged out:
# drop_caches leaves the pages a running process has mapped, so without this a daemon's "cold" pass
# read its cache from memory (BENCHMARKS.md numbers before 2026-11-25 were taken so).
drop() {
  /usr/bin/python3 "$root/tests/bench/pageout.py" data.mdb >/dev/null ||
    echo "lib.sh: an LMDB map could not be paged out: this pass is not cold" >&2
  sync
  echo 3 >/proc/sys/vm/drop_caches
}

median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

ratio() { echo "$1 / $2" | bc -l; }

unmount_if_mounted() { if grep -q " $1 " /proc/self/mountinfo; then "$hintfs" unmount "$1"; fi; }

# s3_start WORK: S3Proxy 4.1.0 (tests/target/s3proxy.jar, filesystem backend) on a free loopback
# port with make_dataset's files uploaded to s3://bench/ds, and DelayProxy in front of it adding
# S3_DELAY_MS (default 10) per request. Sets port, pport (the proxy's), key, secret; rclone
# remotes s3p (direct) and s3x (proxy) through RCLONE_CONFIG_*; an s3fs password file. s3_stop
# WORK ends both.
s3_start() {
  unset AWS_CA_BUNDLE # rclone fails with it set in this environment
  key=bench-key secret=bench-secret-0123456789
  mkdir -p "$1/s3data"
  port=$(/usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  printf '%s\n' "s3proxy.endpoint=http://127.0.0.1:$port" "s3proxy.authorization=aws-v2-or-v4" \
    "s3proxy.identity=$key" "s3proxy.credential=$secret" "jclouds.provider=filesystem-nio2" \
    "jclouds.filesystem.basedir=$1/s3data" >"$1/s3proxy.conf"
  java -Xmx1g -jar "$root/tests/target/s3proxy.jar" --properties "$1/s3proxy.conf" >"$1/s3proxy.log" 2>&1 &
  s3pid=$!
  coproc PROXY { exec java -cp "$root/tests/target/test-classes" org.hintfs.it.DelayProxy "$port" "${S3_DELAY_MS:-10}"; }
  read -r pport <&"${PROXY[0]}"
  for _ in $(seq 100); do (exec 3<>/dev/tcp/127.0.0.1/$port) 2>/dev/null && break; sleep 0.2; done
  export RCLONE_CONFIG_S3P_TYPE=s3 RCLONE_CONFIG_S3P_PROVIDER=Other RCLONE_CONFIG_S3P_ACCESS_KEY_ID=$key \
    RCLONE_CONFIG_S3P_SECRET_ACCESS_KEY=$secret RCLONE_CONFIG_S3P_ENDPOINT=http://127.0.0.1:$port \
    RCLONE_CONFIG_S3P_FORCE_PATH_STYLE=true
  export RCLONE_CONFIG_S3X_TYPE=s3 RCLONE_CONFIG_S3X_PROVIDER=Other RCLONE_CONFIG_S3X_ACCESS_KEY_ID=$key \
    RCLONE_CONFIG_S3X_SECRET_ACCESS_KEY=$secret RCLONE_CONFIG_S3X_ENDPOINT=http://127.0.0.1:$pport \
    RCLONE_CONFIG_S3X_FORCE_PATH_STYLE=true
  rclone mkdir s3p:bench 2>/dev/null
  rclone copy --transfers 16 "$1/src" s3p:bench/ds 2>/dev/null
  echo "$key:$secret" >"$1/s3fs.passwd" && chmod 600 "$1/s3fs.passwd"
}

# s3_warm WORK: every object read S3_WARM times (default 10) through S3Proxy (rclone copy, 8
# transfers), so that no filesystem measured afterwards pays for the server's own JIT warm-up; the
# seconds of each round go to stderr. Three rounds were not enough: S3Proxy was still compiling,
# and whoever was measured first lost a third or more of its first pass (measured 2026-11-25).
s3_warm() {
  local t0 times=()
  for _ in $(seq "${S3_WARM:-10}"); do
    t0=$EPOCHREALTIME
    rm -rf "$1/warm" && rclone copy --transfers 8 s3p:bench/ds "$1/warm" 2>/dev/null
    times+=("$(printf '%.1f' "$(echo "$EPOCHREALTIME - $t0" | bc)")")
  done
  rm -rf "$1/warm"
  echo "S3Proxy warmed: ${times[*]} s per round of $ds_files GETs" >&2
}

# s3_bench_start WORK: what an S3 benchmark of the whole dataset starts with: the dataset, the
# reader, WORK/mnt, S3Proxy with the dataset uploaded (s3_start), stopped at exit, and warmed.
s3_bench_start() {
  make_dataset "$1/src"
  compile_reader "$1"
  mkdir -p "$1/mnt"
  s3_start "$1"
  # shellcheck disable=SC2064 # WORK is known now
  trap "s3_stop '$1'" EXIT
  s3_warm "$1"
}

s3_stop() {
  if grep -q " $1/mnt " /proc/self/mountinfo; then umount "$1/mnt" || umount -l "$1/mnt"; fi
  kill "$s3pid" "$PROXY_PID" 2>/dev/null || true
}

# mount_fs FS ENDPOINT_PORT RCLONE_REMOTE MOUNTPOINT CACHE_DIR [hintfs options...]: hintfs, s3fs
# (its disk cache on) or rclone (--vfs-cache-mode full) over s3://bench/ds; or bindfs (C,
# libfuse2, read-only passthrough) over the dataset's local copy beside CACHE_DIR (WORK/src), the
# floor of a FUSE filesystem reading a local disk.
mount_fs() {
  local fs=$1 p=$2 remote=$3 mnt=$4 cache=$5
  shift 5
  case $fs in
    hintfs) AWS_ACCESS_KEY_ID=$key AWS_SECRET_ACCESS_KEY=$secret "$hintfs" mount s3://bench/ds \
      "$mnt" --endpoint "http://127.0.0.1:$p" --cache-dir "$cache" "$@" >/dev/null ;;
    s3fs) s3fs bench:/ds "$mnt" -o "passwd_file=${cache%/*}/s3fs.passwd,url=http://127.0.0.1:$p" \
      -o "use_path_request_style,ro,use_cache=$cache,parallel_count=8" ;;
    rclone) rclone mount "$remote:bench/ds" "$mnt" --read-only --vfs-cache-mode full \
      --cache-dir "$cache" --daemon 2>/dev/null ;;
    bindfs) bindfs -r "${cache%/*}/src" "$mnt" ;;
  esac
  for _ in $(seq 100); do [[ -d $mnt/n00000000 ]] && return 0; sleep 0.1; done
  echo "mount of $fs did not appear" >&2; return 1
}

# one_get_per_miss MNT: fails the benchmark unless every open miss of the hintfs mount cost exactly
# one source request (S3 GETs when the source is S3, else source fetches), and prints both.
one_get_per_miss() {
  "$hintfs" status --json "$1" | /usr/bin/python3 -c '
import json, sys
s = json.load(sys.stdin)
gets = s.get("source_requests", {}).get("gets", s["misses"])
print("source requests %d, open misses %d" % (gets, s["open_misses"]), file=sys.stderr)
sys.exit(0 if gets == s["open_misses"] else 1)' || { echo "bench: source requests != open misses" >&2; exit 1; }
}

unmount_fs() { if [[ $1 == hintfs ]]; then "$hintfs" unmount "$2"; else umount "$2"; fi; }

# gc_log_opts LOG: the JVM options that have a daemon log its GC pauses and safepoints into LOG.
gc_log_opts() { echo "-Xlog:gc*,safepoint:file=$1:timemillis,uptime,level,tags"; }

# gc_pauses LOG FROM_LINE JSON: the GC pauses a daemon logged (-Xlog:gc*,safepoint:file=LOG:
# timemillis,uptime,level,tags, as gc_log_opts gives) after line FROM_LINE, as "max / p99 ms (n, full
# f; the longest's CPU ms), safepoint max ms, with the scan max ms": the first figures over the
# wall-clock window JSON's "wall" gives ([start, end], s since the epoch; the log's lines carry the
# time in ms since the epoch), the last over every line after FROM_LINE (scale-bench: the pass's
# ImageFolder scan too). A pause line ends in its duration ("GC(7) Pause Young (Allocation Failure)
# 300M->120M(980M) 12.345ms"; ZGC's are under gc,phases: "y: Pause Mark Start 0.011ms"), its CPU
# is on its gc,cpu line ("User=0.02s Sys=0.01s Real=0.03s": Real far above the two is a GC thread
# waiting for a core), a safepoint's has "Total: N ns". "-" where there are none.
gc_pauses() {
  tail -n +"$(($2 + 1))" "$1" | /usr/bin/python3 -c '
import json, re, sys
w0, w1 = (t * 1000 for t in json.loads(sys.argv[1])["wall"])
pauses, whole, sp, cpu = [], [], [], {}
for line in sys.stdin:
    t = re.search(r"\[(\d+)ms\]", line)
    inside = t is not None and w0 <= int(t.group(1)) <= w1
    m = re.search(r"GC\((\d+)\) .*Pause (.*) ([0-9.]+)ms$", line)
    if m:
        whole.append(float(m.group(3)))
        if inside:
            pauses.append((float(m.group(3)), m.group(1), "Full" in m.group(2) or "(Major)" in m.group(2)))
    m = re.search(r"GC\((\d+)\) User=([0-9.]+)s Sys=([0-9.]+)s", line)
    if m:
        cpu[m.group(1)] = (float(m.group(2)) + float(m.group(3))) * 1000
    m = re.search(r"Total: ([0-9]+) ns", line)
    if m and inside:
        sp.append(int(m.group(1)) / 1e6)
pauses.sort()
if not pauses:
    print("- (0)", end="")
else:
    p99 = pauses[min(len(pauses) - 1, int(0.99 * len(pauses)))][0]
    top = pauses[-1]
    print("%.1f / %.1f (%d, full %d; CPU %s)" % (top[0], p99, len(pauses), sum(p[2] for p in pauses),
          "%.0f" % cpu[top[1]] if top[1] in cpu else "-"), end="")
print(", safepoint max %.1f" % max(sp) if sp else "", end="")
print(", with the scan %.1f" % max(whole) if whole else "", end="")
' "$3"
}

# make_imagenet_shape DIR: a local tree of ImageNet-1k's shape, 1,000 class directories of 1,281
# files of 256 B each (names like n00000007/n00000007_12.JPEG; 1,281,000 files), made once (~70 s)
# under a lock shared by the benchmarks that use it; complete when its .complete marker is there.
# Then its inodes and dentries are read into the kernel's caches (a first listing would otherwise
# read them from disk, and only the first mount would pay for that).
make_imagenet_shape() {
  flock "$1.lock" bash -c '
    [[ -f $0/.complete ]] && exit 0
    rm -rf "$0" && /usr/bin/python3 - "$0" <<PY && touch "$0/.complete"
import os, sys
payload = bytes(range(256))
for c in range(1000):
    d = os.path.join(sys.argv[1], "n%08d" % c)
    os.makedirs(d, exist_ok=True)
    for i in range(1281):
        with open(os.path.join(d, "n%08d_%d.JPEG" % (c, i)), "wb") as f:
            f.write(payload)
PY' "$1"
  find "$1" -type f | wc -l >/dev/null
}

# rss PID: the process's VmRSS in MB. field NAME: NAME of the JSON object on stdin.
rss() { awk '/VmRSS/ { printf "%d", $2 / 1024 }' "/proc/$1/status"; }
field() { /usr/bin/python3 -c "import json,sys; print(json.load(sys.stdin)['$1'])"; }

# gproxy_start: a DelayProxy of its own in front of s3_start's S3Proxy (S3_DELAY_MS, default 10),
# so that its GET count is one mount's; sets gpid and gport, its output in $work/gp.out.
gproxy_start() {
  # Removed first: the shell truncates the file in the background job, and a read before that
  # took the last proxy's port (a mount then found nothing listening there).
  rm -f "$work/gp.out"
  java -cp "$root/tests/target/test-classes" org.hintfs.it.DelayProxy "$port" "${S3_DELAY_MS:-10}" >"$work/gp.out" &
  gpid=$!
  gport=
  # A JVM's start: seconds on a loaded machine (10 s was too short under a load of 17 on 2 cores).
  for _ in $(seq 600); do gport=$(head -1 "$work/gp.out" 2>/dev/null); [[ -n $gport ]] && break; sleep 0.1; done
  [[ -n $gport ]] || { echo "lib.sh: DelayProxy printed no port in 60 s ($work/gp.out)" >&2; return 1; }
}
# gproxy_stop: sets ggets to the object GETs it forwarded (not in a subshell: it waits for the proxy).
# key_gets KEY: after gproxy_stop, the GETs of one object (its path, /bucket/key), 0 if none.
gproxy_stop() {
  kill -TERM "$gpid"
  wait "$gpid" 2>/dev/null || true
  ggets=$(sed -n 's/^object_gets \([0-9]*\).*/\1/p' "$work/gp.out")
}
key_gets() { awk -v k="$1" '$1 == "key_gets" && $2 == k { n = $3 } END { print n + 0 }' "$work/gp.out"; }
