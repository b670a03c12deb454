#!/usr/bin/env bash
# A cache disk that is full for a moment: the cache dir on a 320 MiB ext4 (a loop-mounted image),
# `--cache-size 200M --ram-cache 0`, the FILES-file dataset (default 1,500 of ~110 KB, 165 MB) in a
# local directory. Epoch 1 reads half the files (sorted order) and waits for the writer; another
# process (dd) then fills the filesystem to its last byte, epoch 1 reads the other half while it is
# full, and the filler is deleted 2 s after it filled the disk; epochs 2-4 read everything. Every
# byte is checked and the page cache dropped before each epoch. Runs each jar twice: no fill (the
# reference) and the fill. Prints per run: each epoch's share of opens served from the cache
# (.hintfs/stats' open hits over opens), wrong bytes, reader errors, and status's cache line at the
# end.
# Usage: tests/bench/full-disk-bench.sh [WORKDIR] (root; after mvn package)
#   JARS="before=OLD.jar after=NEW.jar" (default: the built jar); ARGS passes options to every mount.
set -euo pipefail
source "$(dirname "$(readlink -f "$0")")/lib.sh"
work=${1:-/tmp/hintfs-full-disk-bench}
ds_files=${FILES:-1500}
make_dataset "$work/src"
mkdir -p "$work/mnt" "$work/disk"
cleanup() {
  unmount_if_mounted "$work/mnt"
  # The daemon may still be closing its cache on the small disk: give it a minute.
  local i
  for ((i = 0; i < 60; i++)); do
    grep -q " $work/disk " /proc/self/mountinfo || return 0
    umount "$work/disk" 2>/dev/null && return 0
    sleep 1
  done
  umount "$work/disk"
}
trap cleanup EXIT
echo "| jar | run | epoch 1 / 2 / 3 / 4 opens from the cache | wrong | errors | status at the end |"
echo "|---|---|---|---|---|---|"
for side in ${JARS:-built=$root/fs/target/hintfs.jar}; do
  export HINTFS_JAR=${side#*=}
  label=${side%%=*}
  for run in nofill fill; do
    cleanup
    rm -f "$work/disk.img"
    truncate -s 320M "$work/disk.img"
    mkfs.ext4 -q -F "$work/disk.img"
    mount -o loop "$work/disk.img" "$work/disk"
    # shellcheck disable=SC2086 # ARGS is a list of options
    "$hintfs" mount "$work/src" "$work/mnt" --cache-dir "$work/disk/cache" --cache-size 200M \
      --ram-cache 0 ${ARGS:-} >/dev/null
    row=$(/usr/bin/python3 - "$work/mnt" "$work/src" "$work/disk" "$run" <<'PY'
import json, os, subprocess, sys, threading, time
mnt, src, disk, run = sys.argv[1:5]
files = sorted(os.path.relpath(os.path.join(d, f), src) for d, _, fs in os.walk(src) for f in fs)
wrong = errors = 0

def stats():
    with open(os.path.join(mnt, ".hintfs/stats")) as f:
        return json.load(f)

def drop():
    subprocess.run(["sync"])
    with open("/proc/sys/vm/drop_caches", "w") as f:
        f.write("3\n")

def read(names):
    global wrong, errors
    for n in names:
        try:
            with open(os.path.join(mnt, n), "rb") as f:
                got = f.read()
            with open(os.path.join(src, n), "rb") as f:
                wrong += got != f.read()
        except OSError:
            errors += 1

def settle():  # the writer's queue empty (the fill must find the first half stored)
    for _ in range(300):
        if stats()["write_queue_bytes"] == 0:
            return
        time.sleep(0.1)

shares = []
for epoch in range(1, 5):
    drop()
    s0 = stats()
    if epoch == 1:
        half = len(files) // 2
        read(files[:half])
        settle()
        if run == "fill":
            filler = os.path.join(disk, "filler")
            subprocess.run(["dd", "if=/dev/zero", "of=" + filler, "bs=1M"], capture_output=True)
            timer = threading.Timer(2.0, os.remove, [filler])
            timer.start()
            read(files[half:])
            timer.join()
        else:
            read(files[half:])
    else:
        read(files)
    settle()
    s1 = stats()
    h = s1["open_hits"] - s0["open_hits"]
    m = s1["open_misses"] - s0["open_misses"]
    shares.append("%.0f%%" % (100.0 * h / max(1, h + m)))
print(" / ".join(shares), wrong, errors, sep=" | ")
PY
)
    health=$("$hintfs" status "$work/mnt" | sed -n 's/^cache: *//p')
    echo "| $label | $run | $row | $health |"
  done
done
