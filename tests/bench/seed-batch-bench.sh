#!/usr/bin/env bash
# Seed hints with large DataLoader batches: rank 0 of 2 over 12,800 small files, a source with
# LATENCY_MS per read (--source-latency-ms, default 10), prefetch window WINDOW (default 256), two
# epochs, for each batch x workers below: with the right seed hint, and with a wrong one (dropped
# as stale: the mount then reads as with no hint), side by side. Prints the share of opens local
# after each epoch's first batches, stale drops and seconds, and the wrong/right time ratio; last,
# the right seed's share local in each epoch's first batches (its head: the opens before the
# loader yields batch 2 x workers). ARGS: more mount options (e.g. "--max-fetches 64"); WRONG=0
# skips the wrong seed's runs (their columns then read "-").
# Usage: tests/bench/seed-batch-bench.sh [WORKDIR] (root); CONFIGS="16x4 256x4" to choose.
set -euo pipefail
source "$(dirname "$(readlink -f "$0")")/lib.sh"
work=${1:-/tmp/hintfs-seed-batch}
configs=${CONFIGS:-16x4 64x8 256x4 512x4}
window=${WINDOW:-256}
latency=${LATENCY_MS:-10}
wrong_too=${WRONG:-1}
read -r -a extra <<<"${ARGS:-}"
src="$work/src" mnt="$work/mnt"
if [[ ! -d $src ]]; then
  /usr/bin/python3 - "$src" <<'PY'
import os, random, sys
rnd = random.Random(11)
for i in range(12800):
    d = os.path.join(sys.argv[1], "train", "c%d" % (i % 8))
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "%d.jpg" % i), "wb") as f:
        f.write(os.urandom(1000 + rnd.randrange(4000)))
PY
fi
mkdir -p "$mnt"
unmount_if_mounted "$mnt"
trap 'unmount_if_mounted "$mnt"' EXIT
one() { # BATCH WORKERS HINT_SEED -> "local drops seconds head_local"
  rm -rf "$work/cache"
  "$hintfs" mount "$src" "$mnt" --cache-dir "$work/cache" --source-latency-ms "$latency" \
    --prefetch-window "$window" "${extra[@]}" >/dev/null
  BATCH=$1 WORKERS=$2 /usr/bin/python3 "$root/tests/src/test/python/seed_prefetch_check.py" \
    "$mnt" "$src" 1234 "$3" 2 2>/dev/null | tail -1 | /usr/bin/python3 -c '
import json, sys
r = json.load(sys.stdin)
print("%.3f %d %.1f %.3f" % (r["local_after_first_batches"], r["prediction"]["stale_drops"],
                             r["seconds"], r["local_first_batches"]))'
  "$hintfs" unmount "$mnt"
}
echo "| batch x workers | right seed: local | stale drops | s | wrong seed: local | stale drops | s | wrong / right time | right seed: first batches local |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"
for c in $configs; do
  right=$(one "${c%x*}" "${c#*x}" 1234)
  read -r rl rd rs rh <<<"$right"
  wl=- wd=- ws=- ratio=-
  if [[ $wrong_too == 1 ]]; then
    read -r wl wd ws _ <<<"$(one "${c%x*}" "${c#*x}" 999)"
    ratio=$(/usr/bin/python3 -c "print('%.1fx' % ($ws / $rs))")
  fi
  echo "| $c | $rl | $rd | $rs | $wl | $wd | $ws | $ratio | $rh |"
done
echo "(window $window, source latency $latency ms${ARGS:+, $ARGS})"
