#!/usr/bin/env bash
# Issue 26: where a fresh daemon's first pass over S3 spends its CPU, by thread, under JVM flags.
# S3Proxy on loopback (warmed first: every object read three times with rclone), the 2,000-file
# dataset (FILES=N: N files, in a WORKDIR of their own); for each variant a fresh hintfs mount
# with an empty cache (RAM tier off; disk tier off too with NODISK=1, so that later passes are
# misses again), PASSES passes of READERS readers (default 8; page cache dropped before each),
# then rclone's first pass twice for reference. For every pass: files/s and
# the CPU seconds of each thread group (utime + stime from /proc/PID/task; the compiler threads
# are C1_CompilerThre and C2_CompilerThre) and of the whole process, per 1,000 files. One GET per
# miss is checked after each variant.
# VARIANTS: ';'-separated AOT|HINTFS_JAVA_OPTS[|MOUNT ARGS[|JAR]] (AOT 1: the AOT cache built for
# those options first; e.g. '1||--no-warm-up'; JAR: another build's hintfs.jar, for an A/B in one
# run: give each jar a directory of its own, where its AOT cache is kept beside it); a variant
# 'rclone' is rclone's first pass there (interleaved with hintfs's; without one, two run last).
# SETTLE=S: seconds between each mount and its first pass (a trainer's own start), for rclone too;
# default 0. IMPORT_TORCH=1: instead, between the mount and the pass, `import torch, torchvision`
# in /usr/bin/python3 (a trainer's start that needs the CPU too), timed: its seconds are printed
# with the pass.
# Usage: [VARIANTS=...] [PASSES=1] [READERS=8] [NODISK=1] [SETTLE=S] tests/bench/jit-bench.sh
#        [WORKDIR]   (root)
set -euo pipefail
source "$(dirname "$(readlink -f "$0")")/lib.sh"
work=${1:-/tmp/hintfs-jit-bench}
passes=${PASSES:-1}
readers=${READERS:-8}
IFS=';' read -r -a variants <<<"${VARIANTS:-1|;1|-XX:TieredStopAtLevel=1}"
s3_bench_start "$work"
tick=$(getconf CLK_TCK)
nodisk=()
[[ -z ${NODISK:-} ]] || nodisk=(--no-disk-cache)

# cpu_by_thread PID: "name ticks" per thread group (digits stripped from names), then PROCESS.
cpu_by_thread() {
  /usr/bin/python3 - "$1" <<'PY'
import collections, os, re, sys
pid, ticks = sys.argv[1], collections.Counter()
def fields(path):
    s = open(path).read()
    return s[s.index('(') + 1:s.rindex(')')], s[s.rindex(')') + 2:].split()
for t in os.listdir('/proc/%s/task' % pid):
    try:
        name, f = fields('/proc/%s/task/%s/stat' % (pid, t))
    except OSError:
        continue  # a thread that ended meanwhile (its time stays in the process's)
    ticks[re.sub(r'[-#]?[0-9]+$', '', name).strip().replace(' ', '_')] += int(f[11]) + int(f[12])
name, f = fields('/proc/%s/stat' % pid)
ticks['PROCESS'] = int(f[11]) + int(f[12])
for k, v in sorted(ticks.items()):
    print(k, v)
PY
}
# pass_report LABEL PID: runs one 8-reader pass and prints its rate and CPU per 1,000 files.
pass_report() {
  local before after rate
  before=$(cpu_by_thread "$2")
  drop
  rate=$(run "$work/mnt" "$readers" "$3")
  after=$(cpu_by_thread "$2")
  join -a2 -e0 -o 0,1.2,2.2 <(echo "$before") <(echo "$after") | awk -v t="$tick" -v f="$ds_files" -v l="$1" -v r="$rate" '
    { d = ($3 - $2) / t / (f / 1000); if ($1 == "PROCESS") tot = d; else if (d >= 0.02) s = s sprintf(" %s %.2f", $1, d) }
    END { printf "%s: %.0f files/s, %.2f CPU s per 1,000 files (%s)\n", l, r, tot, substr(s, 2) }'
}
# trainer_start: what happens between a mount and its first reader (SETTLE, IMPORT_TORCH).
trainer_start() {
  if [[ -n ${IMPORT_TORCH:-} ]]; then
    local t0=$EPOCHREALTIME
    /usr/bin/python3 -c 'import torch, torchvision'
    echo "import torch, torchvision: $(echo "$EPOCHREALTIME - $t0" | bc) s"
  else
    sleep "${SETTLE:-0}"
  fi
}
# rclone_pass N: rclone's first pass on a fresh mount with an empty cache.
rclone_pass() {
  rm -rf "$work/cache"
  mount_fs rclone "$port" s3p "$work/mnt" "$work/cache"
  trainer_start
  pass_report "rclone pass 1 (mount $1)" "$(pgrep -n -f "rclone mount .*bench/ds $work/mnt")" 1
  umount "$work/mnt"
}
jar0=${HINTFS_JAR:-}
rclones=0
for v in "${variants[@]}"; do
  if [[ $v == rclone ]]; then
    rclone_pass $((rclones += 1))
    continue
  fi
  IFS='|' read -r aot opts margs jar <<<"$v"
  # shellcheck disable=SC2206 # the mount arguments are split on purpose
  margs=(${margs:-})
  export HINTFS_AOT=$aot
  jar=${jar:-$jar0}
  if [[ -n $jar ]]; then export HINTFS_JAR=$jar; else unset HINTFS_JAR; fi
  [[ $aot != 1 ]] || HINTFS_JAVA_OPTS="$opts" "$hintfs" aot-cache >&2
  rm -rf "$work/cache"
  HINTFS_JAVA_OPTS="$opts" mount_fs hintfs "$port" s3p "$work/mnt" "$work/cache" --ram-cache 0 \
    ${nodisk[@]+"${nodisk[@]}"} ${margs[@]+"${margs[@]}"}
  trainer_start
  pid=$("$hintfs" status --json "$work/mnt" | /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["pid"])')
  for pass in $(seq "$passes"); do
    pass_report "hintfs aot=$aot [${opts}] ${margs[*]}${jar:+ $jar} pass $pass" "$pid" "$pass"
  done
  one_get_per_miss "$work/mnt"
  "$hintfs" unmount "$work/mnt"
done
# Variants that named no rclone pass get two at the end, for reference.
if ((rclones == 0)); then
  rclone_pass 1
  rclone_pass 2
fi
