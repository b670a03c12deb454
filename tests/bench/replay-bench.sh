#!/usr/bin/env bash
# Issue 39: a seeded DataLoader(shuffle=True) replayed at epoch 89 through a real mount, default
# options. (1) On a tree of ImageNet-1k's shape (1,000 class directories, 1,281,000 files of 256 B,
# /tmp/imagenet-shape, made once and shared): `seed 0 epoch 89 sampler random` written to
# .hintfs/control; the write's time and answer, when it was applied, the daemon's RSS growth.
# (2) On a 100,000-file tree: `epoch 1` ... `epoch 89` from one stream, its last 5 writes timed (a
# write returns once applied) beside another stream's epochs 1-5. Each for the jar given (the code
# before, built from another worktree) and this tree's, in the same run.
# Usage: flock /tmp/hintfs-bench.lock tests/bench/replay-bench.sh [BEFORE_JAR] (root, after mvn package)
set -euo pipefail
source "$(dirname "$(readlink -f "$0")")/lib.sh"
before=${1:-}
work=${WORK:-/tmp/hintfs-replay-bench}
big=/tmp/imagenet-shape
small=$work/tree100k
mkdir -p "$work/mnt"
make_tree() { # DIR CLASSES PER_CLASS: files of 256 B named like ImageNet's
  /usr/bin/python3 - "$@" <<'PY'
import os, sys
root, classes, per = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
data = bytes(256)
for c in range(classes):
    d = os.path.join(root, "n%08d" % c)
    os.makedirs(d, exist_ok=True)
    for i in range(per):
        with open(os.path.join(d, "n%08d_%d.JPEG" % (c, i)), "wb") as f:
            f.write(data)
PY
}
(
  flock 9
  if [[ ! -f $big/.complete ]]; then
    rm -rf "$big" && make_tree "$big" 1000 1281 && touch "$big/.complete"
  fi
) 9>/tmp/imagenet-shape.lock
[[ -d $small ]] || make_tree "$small" 100 1000
unmount_if_mounted "$work/mnt"
trap 'unmount_if_mounted "$work/mnt"' EXIT
pid_of() { /usr/bin/python3 -c "import json; print(json.load(open('$1/.hintfs/stats'))['pid'])"; }
probe() { # LABEL JAR TREE MODE ARG
  rm -rf "$work/cache"
  local t0 t1
  t0=$(date +%s.%N)
  HINTFS_JAR=$2 "$hintfs" mount "$3" "$work/mnt" --cache-dir "$work/cache" \
    --log-file "$work/$1.log" >/dev/null
  t1=$(date +%s.%N)
  local pid
  pid=$(pid_of "$work/mnt")
  printf '%s (mount %.1f s): ' "$1" "$(echo "$t1 - $t0" | bc -l)"
  /usr/bin/python3 "$root/tests/bench/replay_probe.py" "$4" "$work/mnt" "$pid" "$5"
  "$hintfs" unmount "$work/mnt"
}
jars=()
[[ -n $before ]] && jars+=("before|$before")
jars+=("after|$root/fs/target/hintfs.jar")
for j in "${jars[@]}"; do
  probe "${j%%|*} 1.28M" "${j#*|}" "$big" seed 89
done
for j in "${jars[@]}"; do
  probe "${j%%|*} 100k" "${j#*|}" "$small" epochs 89
done
rm -rf "$work/cache"
