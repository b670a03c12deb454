#!/usr/bin/env bash
# A job across nodes: one training job over three nodes' mounts of one S3 dataset. Three mounts on
# this host stand in for three nodes; world 6, two ranks per mount (tests/src/test/python/
# ranks_check.py --mounts: DistributedSampler(seed 0) over ImageFolder, raw bytes, DataLoader with
# 2 workers, batch 16, every byte checked), no hint (the mounts recognise the orders), 3 epochs,
# the page cache dropped before every epoch. The 2,000-file dataset (~110 KB each) on S3Proxy behind
# DelayProxy (10 ms per request; with LIMIT, at most that many GETs per second, as a throttled S3
# prefix or a shared NFS server). Each mount's cache is 50% of the dataset, the RAM tier off. Rows:
#   independent   three hintfs mounts, each its own cache (what a job had before --cluster)
#   cluster       the same three with --cluster: one home per sample, only the home reads S3
#   rclone        three rclone mounts, --vfs-cache-mode full, --vfs-cache-max-size 50%
# Columns: object GETs per key over the 3 epochs (counted at the proxy), the share of opens served
# locally per mount (worst rank of the mount; after each rank's first batches) per epoch, and the
# job's images/s per epoch (all ranks' images over the slowest rank's time).
# LIMITS: the GET limits to run (default "0 300": unlimited, then 300/s). RUNS: the rows.
# Usage: tests/bench/cluster-bench.sh [WORKDIR] (root; after mvn package; needs rclone)
set -euo pipefail
source "$(dirname "$(readlink -f "$0")")/lib.sh"
work=${1:-/tmp/hintfs-clusterbench}
epochs=${EPOCHS:-3}
limits=${LIMITS:-0 300}
runs=" ${RUNS:-independent cluster rclone} "
check="$root/tests/src/test/python/ranks_check.py"
make_dataset "$work/src"
s3_start "$work"
mnts=("$work/m0" "$work/m1" "$work/m2")
cleanup() {
  for m in "${mnts[@]}"; do unmount_if_mounted "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || true; done
  s3_stop "$work"
}
trap cleanup EXIT
mkdir -p "${mnts[@]}"
half=$(($(du -sb "$work/src" | cut -f1) / 2))

# job FS LIMIT: one run through a fresh proxy; prints the ranks' JSON line, then the proxy's counts.
job() {
  local fs=$1 limit=$2 i pids=()
  : >"$work/proxy.out"
  java -cp "$root/tests/target/test-classes" org.hintfs.it.DelayProxy "$port" 10 "$limit" \
    >"$work/proxy.out" 2>&1 &
  local proxy=$! rp=""
  while [[ -z $rp ]]; do sleep 0.1; rp=$(head -n1 "$work/proxy.out"); done
  local peers=127.0.0.1:7851,127.0.0.1:7852,127.0.0.1:7853
  for i in 0 1 2; do
    rm -rf "$work/cache$i"
    case $fs in
      independent) mount_fs hintfs "$rp" - "${mnts[$i]}" "$work/cache$i" --cache-size 50% --ram-cache 0 &
        pids+=($!) ;;
      cluster) mount_fs hintfs "$rp" - "${mnts[$i]}" "$work/cache$i" --cache-size 50% --ram-cache 0 \
        --cluster bench --cluster-bind "127.0.0.1:785$((i + 1))" --cluster-peers "$peers" &
        pids+=($!) ;;
      rclone) RCLONE_CONFIG_S3R_TYPE=s3 RCLONE_CONFIG_S3R_PROVIDER=Other RCLONE_CONFIG_S3R_ACCESS_KEY_ID=$key \
        RCLONE_CONFIG_S3R_SECRET_ACCESS_KEY=$secret RCLONE_CONFIG_S3R_ENDPOINT=http://127.0.0.1:$rp \
        RCLONE_CONFIG_S3R_FORCE_PATH_STYLE=true rclone mount s3r:bench/ds "${mnts[$i]}" --read-only \
        --vfs-cache-mode full --vfs-cache-max-size "$half" --cache-dir "$work/cache$i" --daemon 2>/dev/null ;;
    esac
  done
  for p in "${pids[@]}"; do wait "$p"; done
  for m in "${mnts[@]}"; do
    for _ in $(seq 200); do [[ -d $m/n00000000 ]] && break; sleep 0.1; done
  done
  local flags=(--no-control)
  [[ $fs == rclone ]] && flags=(--plain)
  /usr/bin/python3 "$check" "${mnts[0]}" "$work/src" --root . --world 6 --epochs "$epochs" --seed 0 \
    --drop-caches --mounts "$(IFS=,; echo "${mnts[*]}")" "${flags[@]}"
  for i in 0 1 2; do
    local m=${mnts[$i]}
    if [[ $fs == rclone ]]; then umount "$m"; else
      cp "$m/.hintfs/stats" "$work/stats-$fs-$limit-$i.json" # kept for a look after the run
      "$hintfs" unmount "$m" >/dev/null
    fi
  done
  kill "$proxy"
  wait "$proxy" 2>/dev/null || true
  grep '^object_gets' "$work/proxy.out"
}

# row LABEL OUTPUT: a Markdown row.
row() {
  /usr/bin/python3 - "$1" "$2" "$ds_files" <<'PY'
import json, sys
label, out = sys.argv[1], sys.argv[2].strip().splitlines()
d = json.loads(next(l for l in out if l.startswith("{")))
g = next(l for l in out if l.startswith("object_gets")).split()
gets, keys = int(g[1]), int(g[3])
rates = " / ".join("%.0f" % r for r in d["node_images_per_s"])
ranks = sorted(d["ranks"], key=lambda r: r["rank"])
local = "-"
if ranks and ranks[0].get("local"):
    per_epoch = []
    for e in range(len(ranks[0]["local"])):
        per_epoch.append(",".join("%.2f" % min(r["local"][e] for r in ranks[2 * m:2 * m + 2])
                                  for m in range(3)))
    local = " / ".join(per_epoch)
print("| %s | %.2f (%d GETs, %d keys) | %s | %s |" % (label, gets / float(sys.argv[3]), gets, keys, local, rates))
PY
}

echo "| run | object GETs per key (3 epochs) | local opens per mount, epochs 0 / 1 / 2 | images/s, epochs 0 / 1 / 2 |"
echo "| --- | --- | --- | --- |"
for limit in $limits; do
  src="10 ms"
  [[ $limit != 0 ]] && src="10 ms, at most $limit GETs/s"
  for r in independent cluster rclone; do
    [[ $runs == *" $r "* ]] || continue
    row "$src: $r" "$(job "$r" "$limit")"
  done
done
