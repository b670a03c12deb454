#!/usr/bin/env bash
# Large files (shards, arrays) over a real S3 server (S3Proxy 4.1.0 on loopback,
# filesystem backend), directly and behind DelayProxy adding 10 ms to every request.
# Dataset: one 1 GiB file and 8 shards of 128 MiB (random bytes), under n00000000/.
# For each endpoint and filesystem: a fresh mount with an empty cache; "1 reader": dd bs=1M of the
# 1 GiB file, first read (every block from the source) then read again (page cache dropped, and a
# hintfs daemon's LMDB map paged out: served by each filesystem's own disk cache); "8 readers": 8
# dd at once, one per shard, first read then read again. "first, warm mount" (1 reader): then, in
# the same mount, the 8 shards read one after another by one dd, each block from the source: a
# first read by a daemon that has already read 1 GiB, as a long-running mount reads its next shards
# (a fresh daemon's first GiB also pays its JIT, its heap's growth and its RAM tier's first fill).
# MB/s = bytes read / wall seconds.
# GETs: at 10 ms away, the object GETs the proxy forwarded (a fresh proxy per mount); directly,
# hintfs's own count (source_requests.gets), the others' unknown ("-").
# The proxy's own limit (the floor of "10 ms away"): the 1 GiB object read through it by rclone
# cat, 1 stream and 16 ranged streams of 64 MiB at once.
# FS_LIST: the filesystems measured (default: hintfs hintfs-before rclone s3fs bindfs;
# hintfs-before is HINTFS_BEFORE_JAR, default /tmp/hintfs-38-before.jar, skipped if absent; s3fs
# and bindfs if installed). bindfs reads the dataset's local copy (WORK/src) through FUSE: no
# source, so it runs once (its figures stand in both endpoints' rows). Its "again" is the floor of
# every filesystem's "again" here: a FUSE filesystem reading files from the local disk after the
# page cache was dropped, which is what each of the others' disk caches does.
# HINTFS_BEFORE_JAVA_OPTS: JVM options for hintfs-before's daemon in place of HINTFS_JAVA_OPTS (an
# A/B of one JVM flag: the same jar as both). Direct takes FS_LIST in its order, 10 ms away in
# the reverse order (the first daemon of a pair often reads slower on a shared machine).
# Each hintfs row runs as setup.sh leaves a daemon: with its jar's AOT cache (`hintfs aot-cache`,
# built for that jar and its JVM options into WORK/aot-FS before the runs; on Java 25 it holds the
# training run's classes and method profiles). AOT=0: no row has one (the figures before
# 2026-11-28 were without); BEFORE_AOT=0: hintfs-before alone without one.
# Usage: tests/bench/large-file-bench.sh [WORKDIR] (root; after mvn package and test-compile)
set -euo pipefail
source "$(dirname "$(readlink -f "$0")")/lib.sh"
work=${1:-/tmp/hintfs-largebench}
before_jar=${HINTFS_BEFORE_JAR:-/tmp/hintfs-38-before.jar}
fs_list=${FS_LIST:-hintfs hintfs-before rclone s3fs bindfs}
mib=1048576

make_large_dataset "$work"
mkdir -p "$work/mnt"

# aot_for FS AOT JAR OPTS: WORK/aot-FS, holding JAR's AOT cache for OPTS unless AOT is 0 (empty
# then: the launcher starts the daemon without one, whatever lies beside the jar).
declare -A shown
aot_for() {
  local dir=$work/aot-$1
  rm -rf "$dir" && mkdir -p "$dir"
  shown[$1]=$1
  if [[ $2 != 0 ]]; then
    if HINTFS_AOT_DIR=$dir HINTFS_JAR=$3 HINTFS_JAVA_OPTS=$4 "$hintfs" aot-cache >&2; then
      shown[$1]="$1 (AOT cache)"
    else
      echo "large-file-bench: $1 runs without an AOT cache (its build failed)" >&2
    fi
  fi
}
this_jar=${HINTFS_JAR:-$root/fs/target/hintfs.jar}
before_opts=${HINTFS_BEFORE_JAVA_OPTS:-${HINTFS_JAVA_OPTS:-}}
for fs in $fs_list; do
  case $fs in
    hintfs) aot_for hintfs "${AOT:-1}" "$this_jar" "${HINTFS_JAVA_OPTS:-}" ;;
    hintfs-before) [[ ! -f $before_jar ]] || aot_for hintfs-before "${BEFORE_AOT:-${AOT:-1}}" "$before_jar" "$before_opts" ;;
  esac
done

s3_start "$work"
trap "s3_stop '$work'" EXIT


# mbps BYTES CMD...: MB/s of CMD.
mbps() {
  local b=$1 t0
  shift
  t0=$EPOCHREALTIME
  "$@"
  echo "$b / ($EPOCHREALTIME - $t0) / 1000000" | bc -l
}
one() { dd if="$work/mnt/n00000000/big.bin" of=/dev/null bs=1M status=none; }
shards_in_turn() {
  for i in 0 1 2 3 4 5 6 7; do dd if="$work/mnt/n00000000/shard-$i.tar" of=/dev/null bs=1M status=none; done
}
eight() {
  local pids=()
  for i in 0 1 2 3 4 5 6 7; do
    dd if="$work/mnt/n00000000/shard-$i.tar" of=/dev/null bs=1M status=none &
    pids+=($!)
  done
  wait "${pids[@]}"
}
hintfs_gets() {
  "$hintfs" status --json "$work/mnt" |
    /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["source_requests"]["gets"])'
}
# settle: waits (up to 60 s) until the hintfs daemon's disk writer has stored what the first read
# fetched: its queue empty at two polls in a row. Without it, "again" began while the writer was
# still storing the last third of the file, whose pages then stayed in the page cache the drop
# had just emptied, and were read from memory, not from the disk cache (measured 2026-11-29).
settle() {
  local n=0 q
  for _ in $(seq 200); do
    q=$("$hintfs" status --json "$work/mnt" | field write_queue_bytes)
    if [[ $q == 0 ]]; then n=$((n + 1)); else n=0; fi
    ((n < 2)) || return 0
    sleep 0.3
  done
  echo "large-file-bench: the disk writer did not settle" >&2
}
# check CASE: the bytes read through the mount are the source's (cmp, page cache dropped after).
check() {
  if [[ $1 == 1 ]]; then
    cmp "$work/mnt/n00000000/big.bin" "$work/src/n00000000/big.bin"
  else
    for i in 0 1 2 3 4 5 6 7; do cmp "$work/mnt/n00000000/shard-$i.tar" "$work/src/n00000000/shard-$i.tar"; done
  fi
}

# The proxy's own limit.
unset AWS_CA_BUNDLE
gproxy_start
export RCLONE_CONFIG_S3G_TYPE=s3 RCLONE_CONFIG_S3G_PROVIDER=Other RCLONE_CONFIG_S3G_ACCESS_KEY_ID=$key \
  RCLONE_CONFIG_S3G_SECRET_ACCESS_KEY=$secret RCLONE_CONFIG_S3G_ENDPOINT=http://127.0.0.1:$gport \
  RCLONE_CONFIG_S3G_FORCE_PATH_STYLE=true
rclone cat s3g:bench/ds/n00000000/big.bin >/dev/null # S3Proxy's warm-up
floor1=$(mbps $((1024 * mib)) sh -c 'rclone cat s3g:bench/ds/n00000000/big.bin >/dev/null')
floor16=$(mbps $((1024 * mib)) sh -c 'for i in $(seq 0 15); do rclone cat --offset $((i * 67108864)) --count 67108864 s3g:bench/ds/n00000000/big.bin >/dev/null & done; wait')
gproxy_stop
echo "proxy alone (rclone cat of 1 GiB): 1 stream $(printf %.0f "$floor1") MB/s, 16 ranged streams $(printf %.0f "$floor16") MB/s" >&2

declare -A r g
for ep in direct proxy; do
  # The first daemon of a pair often reads slower on a shared machine: the second endpoint takes
  # the filesystems in the reverse order, so neither hintfs nor hintfs-before always goes first.
  order=$fs_list
  if [[ $ep == proxy ]]; then order=$(printf '%s\n' $fs_list | tac | tr '\n' ' '); fi
  for fs in $order; do
    [[ $fs != s3fs ]] || command -v s3fs >/dev/null || { echo "s3fs is not installed: skipped" >&2; continue; }
    [[ $fs != bindfs ]] || command -v bindfs >/dev/null || { echo "bindfs is not installed: skipped" >&2; continue; }
    if [[ $fs == bindfs && $ep == proxy ]]; then # no source: the direct run's figures stand
      for k in "${!r[@]}"; do [[ $k != direct,bindfs,* ]] || r[proxy,${k#direct,}]=${r[$k]}; done
      for k in "${!g[@]}"; do [[ $k != direct,bindfs,* ]] || g[proxy,${k#direct,}]=${g[$k]}; done
      continue
    fi
    [[ $fs != hintfs-before ]] || [[ -f $before_jar ]] || { echo "$before_jar is missing: skipped" >&2; continue; }
    for c in 1 8; do
      rm -rf "$work/cache"
      p=$port
      if [[ $ep == proxy ]]; then gproxy_start; p=$gport; fi
      export RCLONE_CONFIG_S3G_ENDPOINT=http://127.0.0.1:$p
      case $fs in
        hintfs) HINTFS_AOT_DIR=$work/aot-hintfs HINTFS_JAR=$this_jar \
          mount_fs hintfs "$p" s3g "$work/mnt" "$work/cache" ;;
        hintfs-before) HINTFS_AOT_DIR=$work/aot-hintfs-before HINTFS_JAR=$before_jar HINTFS_JAVA_OPTS=$before_opts \
          mount_fs hintfs "$p" s3g "$work/mnt" "$work/cache" ;;
        *) mount_fs "$fs" "$p" s3g "$work/mnt" "$work/cache" ;;
      esac
      if [[ $c == 1 ]]; then what=one; else what=eight; fi
      drop; r[$ep,$fs,$c,1]=$(mbps $((1024 * mib)) $what)
      if [[ $fs == hintfs* ]]; then settle; fi
      drop; r[$ep,$fs,$c,2]=$(mbps $((1024 * mib)) $what)
      hg=-
      if [[ $fs == hintfs* ]]; then drop; check $c; hg=$(hintfs_gets); fi
      if [[ $c == 1 ]]; then
        drop; r[$ep,$fs,1,3]=$(mbps $((1024 * mib)) shards_in_turn)
        g3=-
        if [[ $fs == hintfs* ]]; then g3=$(($(hintfs_gets) - hg)); fi
      fi
      unmount_fs "${fs%-before}" "$work/mnt"
      if [[ $ep == proxy ]]; then
        gproxy_stop
        g[$ep,$fs,$c]=$ggets
        if [[ $c == 1 ]]; then
          bg=$(key_gets /bench/ds/n00000000/big.bin)
          g[$ep,$fs,1]=$bg
          g3=$((ggets - bg))
        fi
      else
        g[$ep,$fs,$c]=$hg
      fi
      [[ $c != 1 ]] || g[$ep,$fs,1,3]=$g3
      echo "$ep $fs $c readers: first $(printf %.0f "${r[$ep,$fs,$c,1]}") MB/s," \
        "again $(printf %.0f "${r[$ep,$fs,$c,2]}") MB/s, GETs ${g[$ep,$fs,$c]} (hintfs's count: $hg)" \
        "$([[ $c != 1 ]] || echo "; first, warm mount $(printf %.0f "${r[$ep,$fs,1,3]}") MB/s, GETs $g3")" >&2
    done
  done
done

fss=()
for fs in $fs_list; do [[ -n ${r[direct,$fs,1,1]:-} ]] && fss+=("$fs"); done
echo "proxy alone, 1 GiB through it: 1 stream $(printf %.0f "$floor1") MB/s, 16 ranged streams $(printf %.0f "$floor16") MB/s"
echo
printf '| endpoint | readers | pass |'; for fs in "${fss[@]}"; do printf ' %s MB/s (GETs) |' "${shown[$fs]:-$fs}"; done
for fs in "${fss[@]}"; do [[ $fs == hintfs ]] || printf ' hintfs/%s |' "$fs"; done; echo
printf '| --- | --- | --- |'; for _ in "${fss[@]}"; do printf ' --- |'; done
for fs in "${fss[@]}"; do [[ $fs == hintfs ]] || printf ' --- |'; done; echo
for ep in direct proxy; do for c in 1 8; do for pass in 1 2 3; do
  [[ $pass != 3 || $c == 1 ]] || continue
  printf '| %s | %s | %s |' "$([[ $ep == direct ]] && echo direct || echo "10 ms away")" "$c" \
    "$(case $pass in 1) echo first ;; 2) echo again ;; 3) echo "first, warm mount" ;; esac)"
  for fs in "${fss[@]}"; do
    printf ' %.0f' "${r[$ep,$fs,$c,$pass]}"
    case $pass in
      1) printf ' (%s) |' "${g[$ep,$fs,$c]}" ;;
      3) printf ' (%s) |' "${g[$ep,$fs,1,3]}" ;;
      *) printf ' |' ;;
    esac
  done
  for fs in "${fss[@]}"; do
    [[ $fs == hintfs ]] || printf ' %.2fx |' "$(ratio "${r[$ep,hintfs,$c,$pass]}" "${r[$ep,$fs,$c,$pass]}")"
  done
  echo
done; done; done
