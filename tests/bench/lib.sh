# Shared helpers of the benchmark scripts (sourced, not run).
root=$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/../.." && pwd)
hintfs="$root/mount-scripts/hintfs"

# make_dataset DIR: 2,000 files of ~110 KB (Gaussian, sd 30 KB) in 20 class directories.
make_dataset() {
  [[ -d $1 ]] && return 0
  /usr/bin/python3 - "$1" <<'PY'
import os, random, sys
rnd = random.Random(2)
for i in range(2000):
    d = os.path.join(sys.argv[1], "n%08d" % (i % 20))
    os.makedirs(d, exist_ok=True)
    size = max(1000, int(rnd.gauss(110_000, 30_000)))
    with open(os.path.join(d, "img_%05d.JPEG" % i), "wb") as f:
        f.write(os.urandom(size))
PY
}

# compile_reader WORKDIR: ReadBench compiled once (the source launcher recompiles every run).
compile_reader() {
  mkdir -p "$1/classes" && javac -d "$1/classes" "$root/tests/bench/ReadBench.java"
  reader_cp="$1/classes"
}

# run DIR THREADS SEED: files/s of one pass over DIR.
run() { java -cp "$reader_cp" ReadBench "$1" "$2" "$3" | cut -d' ' -f1; }

drop() { sync; echo 3 >/proc/sys/vm/drop_caches; }

median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

ratio() { echo "$1 / $2" | bc -l; }

unmount_if_mounted() { if grep -q " $1 " /proc/self/mountinfo; then "$hintfs" unmount "$1"; fi; }
