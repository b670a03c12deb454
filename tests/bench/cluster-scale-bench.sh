#!/usr/bin/env bash
# Issue 39 benchmark: 3 members of a cluster at 1.28 M files. The local tree of ImageNet-1k's shape
# that scale-bench.sh uses (1,000 class directories of 1,281 files of 256 B, /tmp/imagenet-shape,
# made once under a lock, complete when its .complete marker is there) mounted three times on this
# host, three hintfs daemons standing in for three nodes and joined as one cluster (--cluster NAME
# --cluster-bind 127.0.0.1:P_i --cluster-peers P_0,P_1,P_2: three free loopback ports whose + 100,
# failure detection's, are free too), each its own --cache-dir and --log-file under WORK, default
# options otherwise. The mounts are made one after another (each has the host's cores to itself
# while it lists, as a node would; the first forms the cluster, the later ones join it during their
# mount). Then, per member:
#   mount s          the mount command's wall time (the listing, and the join for members 1 and 2)
#   view of 3 s      from the last mount command's return until the member's stats show 3 members
#                    and no rebalance (cluster.members, cluster.rebalancing; as ClusterIT waits)
#   RSS MB           the daemon's VmRSS (pid from .hintfs/stats) after mount + join / after the
#                    ImageFolder scan through member 0 / after the reads / after the seed hint
#   images/s         a DataLoader pass per member at once, each member's mount read by its own
#                    process: rank i of DistributedSampler(world 3, seed 0, epoch 0), its first
#                    SAMPLES indices, 2 workers, batch 256, raw bytes (cluster_scale.py pass); two
#                    identical passes, the first fills the caches, the second is measured. The job:
#                    all ranks' samples over the time from the first rank's start to the last's end
#   CPU s            the daemon's utime + stime over the measured pass
#   GC pauses        over the measured pass's reads (-Xlog:gc*,safepoint into WORK/gc-I.log, as
#                    scale-bench.sh: gc_log_opts, gc_pauses)
#   seed at epoch 89 `job bench dataset .` then `job bench seed 0 epoch 89 sampler random` written to
#                    the member's .hintfs/control (replay_probe.py seed, as replay-bench.sh): the
#                    write's seconds and answer, when it was applied, the RSS peak growth; written
#                    to one member after another, after the reads
# and the cluster's counters (stats' cluster) at the view of 3, after pass 1 and after pass 2.
# Everything the tables come from stays in WORK (stats-*.json, pass*-*.json, daemon-*.log).
# HINTFS_JAR=JAR runs another jar (a copy that a rebuild while the run waits for the lock does not
# change); SAMPLES (default 60000, per rank) sizes the passes; EXTRA_JAVA_OPTS go to each daemon.
# Run under the bench lock: flock /tmp/hintfs-bench.lock tests/bench/cluster-scale-bench.sh [WORKDIR]
# Root, after mvn package. ~10 min (and a few more the first time, to make the tree).
set -euo pipefail
source "$(dirname "$(readlink -f "$0")")/lib.sh"
work=${1:-/tmp/hintfs-cluster-scale-bench}
tree=/tmp/imagenet-shape
samples=${SAMPLES:-60000}
export HINTFS_JAR=${HINTFS_JAR:-$root/fs/target/hintfs.jar}
py=(/usr/bin/python3 "$root/tests/bench/scale_pass.py")
cpy=(/usr/bin/python3 "$root/tests/bench/cluster_scale.py")
probe=(/usr/bin/python3 "$root/tests/bench/replay_probe.py")

make_imagenet_shape "$tree"
mnts=("$work/m0" "$work/m1" "$work/m2")
mkdir -p "${mnts[@]}"
for m in "${mnts[@]}"; do unmount_if_mounted "$m"; done
pids=() readers=()
cleanup() {
  local p m
  for p in "${readers[@]}"; do kill "$p" 2>/dev/null || true; done
  for m in "${mnts[@]}"; do unmount_if_mounted "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || true; done
  for p in "${pids[@]}"; do # a daemon still alive 10 s after its unmount is a straggler
    for _ in $(seq 100); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
    if kill -0 "$p" 2>/dev/null; then
      echo "cluster-scale-bench: daemon $p still up after its unmount: killed" >&2
      kill -9 "$p" 2>/dev/null || true
    fi
  done
}
trap cleanup EXIT

# snap STAGE: each member's RSS into WORK/rss-STAGE-I, its stats into WORK/stats-STAGE-I.json
snap() {
  local i
  for i in 0 1 2; do
    rss "${pids[$i]}" >"$work/rss-$1-$i"
    cp "${mnts[$i]}/.hintfs/stats" "$work/stats-$1-$i.json"
  done
}

read -r -a ports <<<"$("${cpy[@]}" ports)"
peers=127.0.0.1:${ports[0]},127.0.0.1:${ports[1]},127.0.0.1:${ports[2]}
name=cscale-$$
echo "cluster-scale-bench: cluster $name on $peers, $samples samples per rank" >&2
rm -f "$work"/{rss-*,stats-*.json,pass*.json,gc-*.txt,seed-*.txt,mount-*.s,join.json,scan.json}
for i in 0 1 2; do
  rm -rf "$work/cache-$i" "$work/gc-$i.log" "$work/daemon-$i.log"
  t0=$EPOCHREALTIME
  HINTFS_JAVA_OPTS="$(gc_log_opts "$work/gc-$i.log") ${EXTRA_JAVA_OPTS:-}" "$hintfs" mount "$tree" \
    "${mnts[$i]}" --cache-dir "$work/cache-$i" --log-file "$work/daemon-$i.log" \
    --cluster "$name" --cluster-bind "127.0.0.1:${ports[$i]}" --cluster-peers "$peers" >/dev/null
  echo "$EPOCHREALTIME - $t0" | bc >"$work/mount-$i.s"
  pids+=("$(field pid <"${mnts[$i]}/.hintfs/stats")")
  echo "cluster-scale-bench: member $i mounted in $(cat "$work/mount-$i.s") s, pid ${pids[$i]}" >&2
done
"${cpy[@]}" wait "$EPOCHREALTIME" "${mnts[@]}" >"$work/join.json"
snap mount
"${py[@]}" scan "${mnts[0]}" >"$work/scan.json"
snap scan

# passes P: the three ranks at once, rank i through member i; each one's JSON into WORK/passP-I.json
passes() {
  local i
  readers=()
  for i in 0 1 2; do
    "${cpy[@]}" pass "${mnts[$i]}" 3 "$i" "$samples" "${pids[$i]}" >"$work/pass$1-$i.json" &
    readers+=($!)
  done
  for i in 0 1 2; do wait "${readers[$i]}"; done
  readers=()
  echo "cluster-scale-bench: pass $1 images/s by rank: $(for i in 0 1 2; do field images_per_s <"$work/pass$1-$i.json"; done | xargs)" >&2
}
passes 1
snap pass1
lines=()
for i in 0 1 2; do lines+=("$(wc -l <"$work/gc-$i.log")"); done
passes 2
snap pass2
for i in 0 1 2; do
  gc_pauses "$work/gc-$i.log" "${lines[$i]}" "$(cat "$work/pass2-$i.json")" >"$work/gc-$i.txt"
  echo "member $i: CPU s by thread over pass 2: $(field threads <"$work/pass2-$i.json")" >&2
done

for i in 0 1 2; do
  "${probe[@]}" seed "${mnts[$i]}" "${pids[$i]}" 89 | tee "$work/seed-$i.txt" >&2
done
snap seed
# The seed line is the probe's last; keep only it for the table.
for i in 0 1 2; do tail -n1 "$work/seed-$i.txt" >"$work/seed-$i.tmp" && mv "$work/seed-$i.tmp" "$work/seed-$i.txt"; done

"${cpy[@]}" table "$samples" "$work"
for i in 0 1 2; do
  n=$(grep -c -E ' (ERROR|WARN) ' "$work/daemon-$i.log" || true)
  echo "member $i: $n ERROR/WARN lines in $work/daemon-$i.log" >&2
done
