#!/usr/bin/env bash
# One command for a fresh Debian machine: install what is missing, build, generate a small demo
# image dataset, mount it, train a small model on it through ImageFolder + DataLoader, print the
# mount's status, unmount.
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
