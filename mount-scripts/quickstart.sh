#!/usr/bin/env bash
# One command for a fresh Debian machine: install what is missing, build, generate a small demo
# image dataset, mount it, train a small model on it through ImageFolder + DataLoader, print the
# mount's status; then show what a hint buys: the same training over a source 5 ms away with a
# cache half the dataset's size, without and with the seed hint, side by side. Ends unmounted.
set -euo pipefail
root=$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/.." && pwd)
hintfs="$root/mount-scripts/hintfs"
work=${HINTFS_DEMO_DIR:-/tmp/hintfs-demo}

"$root/mount-scripts/setup.sh"
mkdir -p "$work/mnt"
if [[ ! -d $work/src/train ]]; then
  echo "quickstart: generating the demo dataset in $work/src" >&2
  /usr/bin/python3 "$root/mount-scripts/make_demo_dataset.py" "$work/src"
fi
if grep -q " $work/mnt " /proc/self/mountinfo; then "$hintfs" unmount "$work/mnt"; fi
"$hintfs" mount "$work/src" "$work/mnt"
trap '"$hintfs" unmount "$work/mnt"' EXIT
/usr/bin/python3 "$root/mount-scripts/demo_train.py" "$work/mnt/train" "$work/mnt/test"
"$hintfs" status "$work/mnt"

echo
echo "quickstart: what a hint buys. The same training twice over a source 5 ms away (a remote"
echo "store), a disk cache of half the dataset and no RAM tier: as is, then with the seed hint."
declare -A result
for run in plain hint; do
  "$hintfs" unmount "$work/mnt"
  rm -rf "$work/cache-$run"
  "$hintfs" mount "$work/src" "$work/mnt" --cache-dir "$work/cache-$run" --cache-size 50% \
    --ram-cache 0 --source-latency-ms 5 >/dev/null
  flag=()
  [[ $run == hint ]] && flag=(--seed-hint)
  result[$run]=$(/usr/bin/python3 "$root/mount-scripts/demo_train.py" "$work/mnt/train" \
    "$work/mnt/test" --json "${flag[@]}" 2>/dev/null | tail -1)
done
/usr/bin/python3 - "${result[plain]}" "${result[hint]}" <<'PY'
import json, sys
plain, hint = (json.loads(a)["epochs"] for a in sys.argv[1:3])
print("%-8s %-26s %s" % ("", "without a hint", "with the seed hint"))
for e, (p, h) in enumerate(zip(plain, hint)):
    print("%-8s %-26s %s" % ("epoch %d" % e,
          "%5.2f s, %3.0f%% cache hits" % (p["seconds"], 100 * p["hit_ratio"]),
          "%5.2f s, %3.0f%% cache hits" % (h["seconds"], 100 * h["hit_ratio"])))
print("(After epoch 0 the kernel's page cache holds this small dataset in both runs, so the times")
print("converge; the hit ratios are what a dataset larger than RAM would get from the mount.)")
PY
