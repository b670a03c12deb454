#!/usr/bin/env bash
# A cluster member that answers slowly (issue 40): three mounts of the 2,000-file directory dataset
# form one cluster (--cluster, homes by consistent hash; caches 50%, RAM tier off), a job of world 6
# reads through them (ranks_check.py: DistributedSampler(seed 0), 2 workers, batch 16, no hints,
# every byte checked, page cache dropped before each of 2 epochs). Members 0 and 1 read their source
# 10 ms away; member 2's every source read takes SLOW_MS (default 2,000: a stalled disk), so each of
# its answers for a sample it has to fetch takes that long. Rows: all three at 10 ms (the
# reference), then member 2 slow; per jar of JARS. Columns: the images/s of the ranks on members 0
# and 1 (their samples over their slowest rank's seconds) per epoch, and the same over the
# reference row's; member 2's ranks are as slow as its source, whatever the others do; and the
# share of members 0-1's opens their own cache served, per epoch.
# With STOP_S (e.g. 30), one more row: member 2 healthy but its daemon stopped (SIGSTOP: its
# connections stay open, nothing answers) STOP_S seconds, from 3 s into the job; its own ranks wait
# for it, the others' rate is measured as above.
# Usage: tests/bench/slow-member-bench.sh [WORKDIR] (root; after mvn package)
#   JARS="before=OLD.jar after=NEW.jar" (default: the built jar); SLOW_MS (0: no slow row);
#   EPOCHS (2); STOP_S.
set -euo pipefail
source "$(dirname "$(readlink -f "$0")")/lib.sh"
work=${1:-/tmp/hintfs-slow-member-bench}
slow=${SLOW_MS:-2000}
epochs=${EPOCHS:-2}
make_dataset "$work/src"
mnts=("$work/m0" "$work/m1" "$work/m2")
mkdir -p "${mnts[@]}"
cleanup() { for m in "${mnts[@]}"; do unmount_if_mounted "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || true; done; }
trap cleanup EXIT
cleanup
peers=127.0.0.1:7861,127.0.0.1:7862,127.0.0.1:7863
# job LAT2: the job's JSON line, member 2's source LAT2 ms away
job() {
  local i pids=() lat
  for i in 0 1 2; do
    rm -rf "$work/cache$i"
    lat=10
    [[ $i == 2 ]] && lat=$1
    "$hintfs" mount "$work/src" "${mnts[$i]}" --cache-dir "$work/cache$i" --cache-size 50% \
      --ram-cache 0 --source-latency-ms "$lat" --cluster slowbench \
      --cluster-bind "127.0.0.1:786$((i + 1))" --cluster-peers "$peers" >/dev/null &
    pids+=($!)
  done
  for p in "${pids[@]}"; do wait "$p"; done
  sleep 3 # the view and the homes' rebalance
  local stopper=
  if [[ -n ${2:-} ]]; then
    local m2pid
    m2pid=$(pgrep -f -- "--cache-dir $work/cache2" | head -1)
    (sleep 3 && kill -STOP "$m2pid" && sleep "$2"; kill -CONT "$m2pid") &
    stopper=$!
  fi
  /usr/bin/python3 "$root/tests/src/test/python/ranks_check.py" "${mnts[0]}" "$work/src" --root . \
    --world 6 --epochs "$epochs" --seed 0 --drop-caches --no-control \
    --mounts "$(IFS=,; echo "${mnts[*]}")"
  [[ -z $stopper ]] || wait "$stopper"
  for i in 0 1 2; do cp "${mnts[$i]}/.hintfs/stats" "$work/stats-m$i.json"; done
  for m in "${mnts[@]}"; do "$hintfs" unmount "$m" >/dev/null; done
}
# others JSON [REF]: images/s of ranks 0-3 (members 0 and 1) per epoch, and over REF's
others() {
  /usr/bin/python3 - "$1" "${2:-}" <<'PY'
import json, sys
d = json.loads(next(l for l in sys.argv[1].splitlines() if l.startswith("{")))
ranks = [r for r in d["ranks"] if r.get("rank", 9) < 4]
bad = [r for r in d["ranks"] if r.get("failed")]
rates = [sum(r["samples"][e] for r in ranks) / max(r["seconds"][e] for r in ranks)
         for e in range(len(ranks[0]["seconds"]))]
out = " / ".join("%.0f" % x for x in rates)
if sys.argv[2]:
    ref = [float(x) for x in sys.argv[2].split(" | ")[0].split(" / ")]
    out += " | " + " / ".join("%.2f" % (x / y) for x, y in zip(rates, ref))
else:
    out += " | 1"
# opens of members 0-1 served from their own cache, per epoch (ranks_check's "local")
local = [sum(r["local"][e] for r in ranks) / len(ranks) for e in range(len(ranks[0]["local"]))]
out += " | " + " / ".join("%.2f" % x for x in local)
print(out + (" | FAILED RANKS %d" % len(bad) if bad else ""))
PY
}
echo "| build | member 2's source | images/s of members 0-1, epochs 0 / 1 | over the 10 ms row | opens served from their cache |"
echo "| --- | --- | --- | --- | --- |"
for side in ${JARS:-built=$root/fs/target/hintfs.jar}; do
  export HINTFS_JAR=${side#*=}
  ref=$(others "$(job 10)")
  echo "| ${side%%=*} | 10 ms | $ref |"
  if ((slow > 0)); then
    r=$(others "$(job "$slow")" "$ref")
    echo "| ${side%%=*} | $slow ms | ${r} |"
  fi
  if [[ -n ${STOP_S:-} ]]; then
    r=$(others "$(job 10 "$STOP_S")" "$ref")
    echo "| ${side%%=*} | 10 ms, daemon stopped ${STOP_S} s | ${r} |"
  fi
  for i in 0 1 2; do # the last job's cluster counters, per member
    echo "m$i: $(grep -o -E '"(peer_[a-z_]*|reads_from_former_homes|former_home_misses|refiled_as_guests|source_reads)" *: *[0-9]*' "$work/stats-m$i.json" | tr '\n' ' ')" >&2
  done
done
