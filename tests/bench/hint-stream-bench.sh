#!/usr/bin/env bash
# Issue 6 benchmark: do hints streaming at full rate slow reads? The 2,000-file dataset, fully
# cached; each pass drops the page cache (so every read reaches the daemon and its cache, where
# the hints' work contends) and reads every file with 8 threads: alone; while another process
# writes 256-sample loss lines to /dev/null as fast as it can (the writer's own CPU, the reference
# on a 2-core machine); and while it writes them to the control file. Alternated, REPS times;
# medians and ratios on stdout, plus the hint lines/s the writer achieved.
# Usage: tests/bench/hint-stream-bench.sh [WORKDIR] (root: it writes /proc/sys/vm/drop_caches)
set -euo pipefail
source "$(dirname "$(readlink -f "$0")")/lib.sh"
work=${1:-/tmp/hintfs-bench}
reps=${REPS:-3}
make_dataset "$work/src"
compile_reader "$work"
mkdir -p "$work/mnt"
unmount_if_mounted "$work/mnt"
rm -rf "$work/hcache"
"$hintfs" mount "$work/src" "$work/mnt" --cache-dir "$work/hcache" >/dev/null
trap 'kill $writer 2>/dev/null || true; unmount_if_mounted "$work/mnt"' EXIT
writer=
echo "dataset ." > "$work/mnt/.hintfs/control"
run "$work/mnt" 8 0 >/dev/null # fill the cache
# start_writer TARGET: a process writing 256-sample loss lines to TARGET as fast as it can.
start_writer() {
  /usr/bin/python3 - "$1" "$work/rate" <<'PY' &
import os, random, sys, time
fd = os.open(sys.argv[1], os.O_WRONLY)
rnd = random.Random(1); n = 0; t0 = time.time()
while True:  # until SIGTERM; the rate is saved as it goes
    os.write(fd, ("loss " + " ".join("#%d=%.4f" % (rnd.randrange(2000), rnd.random())
                                     for _ in range(256)) + "\n").encode())
    n += 1
    if n % 200 == 0:
        with open(sys.argv[2], "w") as f:
            f.write("%.0f" % (n / (time.time() - t0)))
PY
  writer=$!
  sleep 1
}
# SIGTERM: a non-interactive shell starts background jobs with SIGINT ignored.
stop_writer() { kill -TERM $writer; wait $writer 2>/dev/null || true; }
base=() null=() with=() rates=()
for ((r = 0; r < reps; r++)); do
  drop; base+=("$(run "$work/mnt" 8 "$((r + 1))")")
  start_writer /dev/null
  drop; null+=("$(run "$work/mnt" 8 "$((r + 1))")")
  stop_writer
  start_writer "$work/mnt/.hintfs/control"
  drop; with+=("$(run "$work/mnt" 8 "$((r + 1))")")
  stop_writer
  rates+=("$(cat "$work/rate")")
done
b=$(median "${base[@]}"); n=$(median "${null[@]}"); w=$(median "${with[@]}")
echo "| reads alone | reads, writer to /dev/null | reads, hints streaming | hints / alone | hints / same writer to /dev/null | hint lines/s (256 samples) |"
echo "| --- | --- | --- | --- | --- | --- |"
printf '| %.0f | %.0f | %.0f | %.2f | %.2f | %s |\n' "$b" "$n" "$w" "$(ratio "$w" "$b")" "$(ratio "$w" "$n")" "$(median "${rates[@]}")"
