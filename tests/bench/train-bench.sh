#!/usr/bin/env bash
# Issue 6 benchmark: train a small CNN on scikit-learn's digits (train/test ImageFolders, needs
# python3-sklearn) through a mount with a disk cache of 20% of the dataset, sending per-sample
# losses every batch (mount-scripts/train_with_hints.py), once per policy: lru, shade, impact with
# substitution, impact without. Each run records its trace (--trace) and replays it through the
# simulator with the same policy, so the mount's hit ratio stands beside the simulator's. The RAM
# tier is off (--ram-cache 0): it would hold this small dataset whole and hide the policy.
# Usage: tests/bench/train-bench.sh [WORKDIR]
set -euo pipefail
source "$(dirname "$(readlink -f "$0")")/lib.sh"
work=${1:-/tmp/hintfs-train-bench}
epochs=${EPOCHS:-8}
mkdir -p "$work/mnt"
[[ -d $work/digits/train ]] || /usr/bin/python3 "$root/mount-scripts/train_with_hints.py" --make-digits "$work/digits"
unmount_if_mounted "$work/mnt"
trap 'unmount_if_mounted "$work/mnt"' EXIT
echo "| policy | substitution | mount hit ratio | simulator hit ratio | served locally (sim) | substitutions | test accuracy | images/s |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- |"
for run in lru: shade: impact:sub impact:; do
  policy=${run%%:*} sub=${run#*:}
  rm -rf "$work/cache" "$work/trace"
  "$hintfs" mount "$work/digits" "$work/mnt" --cache-dir "$work/cache" --cache-size 20% --ram-cache 0 --trace "$work/trace" >/dev/null
  out=$(/usr/bin/python3 "$root/mount-scripts/train_with_hints.py" "$work/mnt" --epochs "$epochs" --policy "$policy" --no-order-hint ${sub:+--substitution} | tail -1)
  "$hintfs" unmount "$work/mnt"
  simpol=$policy${sub:++sub}
  sim=$("$hintfs" simulate --trace "$work/trace" --policies "$simpol" --sizes 20 | tail -1)
  /usr/bin/python3 - "$out" "$sim" "$policy" "${sub:-no}" <<'PY'
import json, sys
o = json.loads(sys.argv[1]); cols = [c.strip() for c in sys.argv[2].split("|")]
print("| %s | %s | %.3f | %s | %s | %d | %.3f | %.0f |" % (sys.argv[3], sys.argv[4], o["hit_ratio"],
      cols[4], cols[5], o["substitutions"], o["accuracy"], o["images_per_s"]))
PY
done
