#!/usr/bin/env bash
# Issue 16: the time and CPU of one order-recognition search at ImageNet-1k (1,281,167 samples)
# and ImageNet-21k (14,197,122) size, and at the tests' 3,200: a default DistributedSampler (seed
# 0, epoch 0), seed 1234 at epoch 5, and random reads (no match). After mvn package.
# Usage: tests/bench/detect-bench.sh
set -euo pipefail
source "$(dirname "$(readlink -f "$0")")/lib.sh"
out=$(mktemp -d)
javac -cp "$root/policy/target/classes" -d "$out" "$root/tests/bench/DetectBench.java"
for kase in default late none; do
  for n in 3200 1281167 14197122; do
    java -Xmx2g -cp "$root/policy/target/classes:$out" DetectBench "$n" 3 "$kase"
  done
done
