#!/usr/bin/env bash
# Issue 61 benchmark: packed datasets, random reads inside large files, hintfs beside rclone
# (--vfs-cache-mode full) and s3fs (use_cache) in the same run, the source 10 ms away (S3Proxy 4.1.0
# on loopback, filesystem backend, behind DelayProxy adding 10 ms to every request).
# Dataset (WORK/src/n00000000/, made once by packed_reader.py make, uploaded once): big.bin, SIZE
# bytes of random bytes (default 2G); samples.h5, 6,000 samples of 96 KiB in one contiguous
# uint8 dataset (h5py, 562 MiB); samples.lmdb/data.mdb, 6,000 values of 96 KiB (586 MiB). The
# local copies are what every byte read through a mount is compared with.
# Each case, for each filesystem: a fresh proxy, a fresh mount with an empty cache, the page cache
# dropped (and a hintfs daemon's LMDB map paged out: lib.sh's drop), then packed_reader.py:
#   pread   os.pread 128 KiB at 1,500 random offsets (seed 1) of big.bin, 4 threads
#   again   then, in the same mount, the same offsets again (the disk writer settled and the page
#           cache dropped first: served by each filesystem's own disk cache); needs pread, which
#           it runs if CASES lacks it
#   memmap  numpy.memmap(uint16) of big.bin, 1,500 windows of 1,025 tokens, 4 processes
#   h5      h5py, 600 random samples of samples.h5, 4 processes
#   lmdb    py-lmdb (readonly, lock=False: mmap), 600 random values, 4 processes
#   small   hintfs alone (hintfs rows only) with --cache-size SMALL_CACHE (default a quarter of
#           SIZE: 512M) over big.bin, three passes of pread with fresh offsets (seeds 101-103) in
#           one mount, page cache dropped before each; the RAM tier keeps its default (512M): a
#           SIZE under cache size + RAM tier fits and is not a quarter-size cache (SMALL_OPTS adds
#           mount options, e.g. --ram-cache 64M for a quick run)
# Processes are forked as a DataLoader's workers are, each opening its own handle (timed).
# reads/s = items read / wall seconds. Every item is compared with the local copy: wrong bytes and
# errors are printed for every row, and the run fails if any is not 0.
# "source bytes / bytes read": hintfs's source_bytes (status --json, after the disk writer settled)
# over the bytes the reader asked for (1,500 x 128 KiB; 1,500 x 2,050 B; 600 x 96 KiB); the mount's
# own bytes_read (what the kernel asked of it: its read-ahead, an mmap's fault read-around) is in
# the detail table. GETs: the object GETs the mount's own DelayProxy forwarded (pread's row counts
# pread and again: one mount), and hintfs's source_requests.gets.
# Env: FS_LIST (default: hintfs rclone s3fs; also hintfs-before), CASES (default: pread again
# memmap h5 lmdb small), SIZE (big.bin's size, numfmt --from=iec: 2G, 256M; a smaller one for a
# quick run), SMALL_CACHE, HINTFS_JAR (hintfs's jar, default fs/target/hintfs.jar),
# HINTFS_BEFORE_JAR (hintfs-before's, for an A/B in one run; default /work/notes/hintfs-before.jar),
# S3_DELAY_MS (default 10), S3_WARM (rounds reading every object before measuring, default 3),
# AOT=0 (no AOT cache for the hintfs rows; by default each jar gets its own, as setup.sh leaves one).
# Usage: tests/bench/packed-bench.sh [WORKDIR] (root; default /tmp/hintfs-packedbench; after
# `mvn -B -q -DskipTests package`, which also builds tests/target: s3proxy.jar, DelayProxy).
# Run it under `flock /tmp/hintfs-bench.lock`. Takes ~10 min with the defaults on 2 shared cores
# (the first run adds ~2-3 min to make and upload the dataset into WORKDIR: 3.3 GB, twice, kept),
# ~3 min with SIZE=256M; the hintfs-before rows add ~1/4.
set -euo pipefail
source "$(dirname "$(readlink -f "$0")")/lib.sh"
export AWS_EC2_METADATA_DISABLED=true
work=${1:-/tmp/hintfs-packedbench}
size=$(numfmt --from=iec "${SIZE:-2G}")
small_cache=${SMALL_CACHE:-$((size / 4 >> 20))M}
fs_list=${FS_LIST:-hintfs rclone s3fs}
cases=${CASES:-pread again memmap h5 lmdb small}
this_jar=${HINTFS_JAR:-$root/fs/target/hintfs.jar}
before_jar=${HINTFS_BEFORE_JAR:-/work/notes/hintfs-before.jar}
reader=(/usr/bin/python3 "$root/tests/bench/packed_reader.py")
src=$work/src/n00000000
mib=1048576

want() { [[ " $cases " == *" $1 "* ]]; }
for c in $cases; do
  case $c in pread | again | memmap | h5 | lmdb | small) ;; *)
    echo "packed-bench: unknown case '$c' in CASES: pread again memmap h5 lmdb small" >&2; exit 2 ;;
  esac
done
fss=()
for fs in $fs_list; do
  case $fs in
    hintfs) [[ -f $this_jar ]] || { echo "packed-bench: $this_jar is missing (HINTFS_JAR): build it first" >&2; exit 2; } ;;
    hintfs-before) [[ -f $before_jar ]] || { echo "packed-bench: $before_jar is missing (HINTFS_BEFORE_JAR)" >&2; exit 2; } ;;
    rclone | s3fs) command -v "$fs" >/dev/null || { echo "packed-bench: $fs is not installed: skipped" >&2; continue; } ;;
    *) echo "packed-bench: unknown filesystem '$fs' in FS_LIST: hintfs hintfs-before rclone s3fs" >&2; exit 2 ;;
  esac
  fss+=("$fs")
done
[[ -f $root/tests/target/s3proxy.jar ]] || { echo "packed-bench: tests/target/s3proxy.jar is missing: run mvn -B -q -DskipTests package" >&2; exit 2; }

mkdir -p "$work/mnt"
"${reader[@]}" make "$work/src" "$size"

jar_of() { if [[ $1 == hintfs-before ]]; then echo "$before_jar"; else echo "$this_jar"; fi; }
declare -A shown
for fs in "${fss[@]}"; do
  shown[$fs]=$fs
  [[ $fs == hintfs* && ${AOT:-1} != 0 ]] || continue
  rm -rf "$work/aot-$fs" && mkdir -p "$work/aot-$fs"
  if HINTFS_AOT_DIR=$work/aot-$fs HINTFS_JAR=$(jar_of "$fs") "$hintfs" aot-cache >&2; then
    shown[$fs]="$fs (AOT cache)"
  else
    echo "packed-bench: $fs runs without an AOT cache (its build failed)" >&2
  fi
done
# hfs FS ARGS...: the launcher with FS's jar and AOT cache.
hfs() { local fs=$1; shift; HINTFS_AOT_DIR=$work/aot-$fs HINTFS_JAR=$(jar_of "$fs") "$hintfs" "$@"; }

gpid=
cleanup() {
  if grep -q " $work/mnt " /proc/self/mountinfo; then umount "$work/mnt" || umount -l "$work/mnt"; fi
  [[ -z $gpid ]] || kill "$gpid" 2>/dev/null || true
  s3_stop "$work"
}
s3_start "$work"
trap cleanup EXIT

# The server's warm-up: every object read whole S3_WARM times, and 64 ranged reads of big.bin.
# (wait on the readers' pids: a bare wait would wait for S3Proxy, a job of this shell too.)
t0=$EPOCHREALTIME
for _ in $(seq "${S3_WARM:-3}"); do
  pids=()
  for o in big.bin samples.h5 samples.lmdb/data.mdb; do rclone cat "s3p:bench/ds/n00000000/$o" >/dev/null 2>&1 & pids+=($!); done
  wait "${pids[@]}"
done
pids=()
for i in $(seq 0 63); do
  rclone cat --offset $((i * (size / 64))) --count 131072 s3p:bench/ds/n00000000/big.bin >/dev/null 2>&1 &
  pids+=($!)
  ((i % 16 != 15)) || { wait "${pids[@]}"; pids=(); }
done
echo "S3Proxy warmed in $(printf %.0f "$(echo "$EPOCHREALTIME - $t0" | bc)") s" >&2

# start_mount FS [hintfs options]: a fresh DelayProxy and a fresh mount of FS through it, its
# cache empty. stop_mount FS: both ended; ggets is what the proxy forwarded.
start_mount() {
  local fs=$1
  shift
  rm -rf "$work/cache" && mkdir -p "$work/cache"
  gproxy_start
  export RCLONE_CONFIG_S3G_TYPE=s3 RCLONE_CONFIG_S3G_PROVIDER=Other RCLONE_CONFIG_S3G_ACCESS_KEY_ID=$key \
    RCLONE_CONFIG_S3G_SECRET_ACCESS_KEY=$secret RCLONE_CONFIG_S3G_ENDPOINT=http://127.0.0.1:$gport \
    RCLONE_CONFIG_S3G_FORCE_PATH_STYLE=true
  case $fs in
    hintfs*) HINTFS_AOT_DIR=$work/aot-$fs HINTFS_JAR=$(jar_of "$fs") \
      mount_fs hintfs "$gport" s3g "$work/mnt" "$work/cache" "$@" ;;
    *) mount_fs "$fs" "$gport" s3g "$work/mnt" "$work/cache" ;;
  esac
}
stop_mount() {
  if [[ $1 == hintfs* ]]; then hfs "$1" unmount "$work/mnt"; else umount "$work/mnt"; fi
  # rclone and s3fs leave after their unmount: their cache is removed only once they are gone.
  for _ in $(seq 100); do pgrep -f -- "--cache-dir $work/cache|use_cache=$work/cache" >/dev/null || break; sleep 0.1; done
  gproxy_stop
  gpid=
}
# settle FS: (hintfs) until the disk writer has stored what was fetched, its queue empty at two
# polls in a row (large-file-bench's), so that source bytes count the background fetches a pass
# caused and a read again reads the disk cache, not pages the writer left in memory.
settle() {
  [[ $1 == hintfs* ]] || return 0
  local n=0 q
  for _ in $(seq 200); do
    q=$(hfs "$1" status --json "$work/mnt" | field write_queue_bytes)
    if [[ $q == 0 ]]; then n=$((n + 1)); else n=0; fi
    ((n < 2)) || return 0
    sleep 0.3
  done
  echo "packed-bench: the disk writer did not settle" >&2
}
# hstat FS: "source_bytes bytes_read gets" of a hintfs mount, "0 0 0" for the others.
hstat() {
  [[ $1 == hintfs* ]] || { echo 0 0 0; return; }
  hfs "$1" status --json "$work/mnt" | /usr/bin/python3 -c '
import json, sys
s = json.load(sys.stdin)
print(s["source_bytes"], s["bytes_read"], s.get("source_requests", {}).get("gets", s.get("misses", 0)))'
}

# measure KEY FS READER-ARGS...: one timed pass (page cache dropped first); records rate, wrong,
# errors, the bytes asked, and hintfs's source bytes, bytes_read and GETs during it.
declare -A rate wrong errs asked srcb mread hgets pgets
measure() {
  local k=$1 fs=$2 out b a
  shift 2
  read -r -a b < <(hstat "$fs")
  drop
  out=$("${reader[@]}" "$@")
  settle "$fs"
  read -r -a a < <(hstat "$fs")
  read -r rate[$k] wrong[$k] errs[$k] asked[$k] < <(/usr/bin/python3 -c '
import json, sys; r = json.loads(sys.argv[1]); print(r["rate"], r["wrong"], r["errors"], r["bytes"])' "$out")
  srcb[$k]=$((a[0] - b[0])) mread[$k]=$((a[1] - b[1])) hgets[$k]=$((a[2] - b[2]))
  echo "$k: $(printf %.0f "${rate[$k]}")/s, wrong bytes ${wrong[$k]}, errors ${errs[$k]}, source $((srcb[$k] / mib)) MiB," \
    "bytes_read $((mread[$k] / mib)) MiB, asked $((asked[$k] / mib)) MiB, hintfs GETs ${hgets[$k]}" >&2
}

m=$work/mnt/n00000000
for c in pread memmap h5 lmdb small; do
  if [[ $c == pread ]]; then want pread || want again || continue; else want "$c" || continue; fi
  for fs in "${fss[@]}"; do
    case $c in
      pread)
        start_mount "$fs"
        measure "pread,$fs" "$fs" pread "$m/big.bin" "$src/big.bin" 1
        ! want again || measure "again,$fs" "$fs" pread "$m/big.bin" "$src/big.bin" 1
        stop_mount "$fs"
        pgets[pread,$fs]=$ggets ;;
      memmap)
        start_mount "$fs"
        measure "memmap,$fs" "$fs" memmap "$m/big.bin" "$src/big.bin" 2 1500 1025 4
        stop_mount "$fs"
        pgets[memmap,$fs]=$ggets ;;
      h5 | lmdb)
        f=samples.h5
        [[ $c == h5 ]] || f=samples.lmdb
        start_mount "$fs"
        measure "$c,$fs" "$fs" "$c" "$m/$f" "$src/$f" 3 600 4
        stop_mount "$fs"
        pgets[$c,$fs]=$ggets ;;
      small)
        [[ $fs == hintfs* ]] || continue
        # shellcheck disable=SC2086 # SMALL_OPTS: options, split
        start_mount "$fs" --cache-size "$small_cache" ${SMALL_OPTS:-}
        for p in 1 2 3; do measure "small$p,$fs" "$fs" pread "$m/big.bin" "$src/big.bin" $((100 + p)); done
        stop_mount "$fs"
        pgets[small,$fs]=$ggets ;;
    esac
  done
done

# The table.
hs=() peers=()
for fs in "${fss[@]}"; do if [[ $fs == hintfs* ]]; then hs+=("$fs"); else peers+=("$fs"); fi; done
gib() { echo "$1" | awk '{ if ($1 >= 2^30) printf "%g GiB", $1 / 2^30; else printf "%g MiB", $1 / 2^20 }'; }
label() {
  case $1 in
    pread) echo "\`os.pread\` 128 KiB at random offsets of a $(gib "$size") file, 4 threads, 1,500 reads" ;;
    again) echo "the same offsets again, from the cache" ;;
    memmap) echo "\`numpy.memmap\` windows of 1,025 tokens (2 KiB), 1,500, 4 processes" ;;
    h5) echo "h5py, 600 random samples of 96 KiB from a $(($(stat -c %s "$src/samples.h5") >> 20)) MiB file, 4 processes" ;;
    lmdb) echo "py-lmdb (mmap, read-only), 600 random values of 96 KiB, 4 processes" ;;
    small) echo "the $(gib "$size") file with \`--cache-size $small_cache\`, three passes of fresh offsets" ;;
  esac
}
x() { if [[ -n ${2:-} && $2 != 0 ]]; then printf '%.2fx' "$(ratio "$1" "$2")"; else printf -- '-'; fi; }
echo
echo "10 ms away (S3_DELAY_MS=${S3_DELAY_MS:-10}); big.bin $(gib "$size"); reads/s; the columns: ${fss[*]}"
echo
printf '| case |'; for fs in "${fss[@]}"; do printf ' %s |' "${shown[$fs]}"; done
for fs in "${hs[@]}"; do printf ' %s / faster peer |' "$fs"; done
for fs in "${hs[@]}"; do printf ' source bytes / bytes read (%s) |' "$fs"; done; echo
printf '|---|'; for _ in "${fss[@]}" "${hs[@]}" "${hs[@]}"; do printf -- '---|'; done; echo
bad=0
for c in pread again memmap h5 lmdb small; do
  want "$c" || continue
  printf '| %s |' "$(label "$c")"
  if [[ $c == small ]]; then
    for fs in "${fss[@]}"; do
      if [[ $fs == hintfs* ]]; then
        printf ' %.0f / %.0f / %.0f |' "${rate[small1,$fs]}" "${rate[small2,$fs]}" "${rate[small3,$fs]}"
      else printf ' |'; fi
    done
    for _ in "${hs[@]}"; do printf ' |'; done
    for fs in "${hs[@]}"; do
      s=$((srcb[small1,$fs] + srcb[small2,$fs] + srcb[small3,$fs]))
      r=$((asked[small1,$fs] + asked[small2,$fs] + asked[small3,$fs]))
      printf ' %.1fx (%.2f GB fetched per %.0f MB read) |' "$(ratio "$s" "$r")" "$(ratio "$s" 1000000000)" "$(ratio "$r" 1000000)"
    done
    echo
    continue
  fi
  best=0
  for fs in "${peers[@]}"; do
    if (($(echo "${rate[$c,$fs]} > $best" | bc -l))); then best=${rate[$c,$fs]}; fi
  done
  for fs in "${fss[@]}"; do printf ' %.0f/s |' "${rate[$c,$fs]}"; done
  for fs in "${hs[@]}"; do printf ' %s |' "$(x "${rate[$c,$fs]}" "$best")"; done
  for fs in "${hs[@]}"; do
    if [[ ${srcb[$c,$fs]} == 0 ]]; then printf ' - (none fetched) |'; else printf ' %s |' "$(x "${srcb[$c,$fs]}" "${asked[$c,$fs]}")"; fi
  done
  echo
done
echo
echo "Details: wrong bytes and errors (every item compared with the local copy), the object GETs the"
echo "mount's DelayProxy forwarded (pread's counts pread and again: one mount), and hintfs's own counts."
echo
echo "| case | filesystem | reads/s | wrong bytes | errors | GETs at the proxy | hintfs GETs | source MiB | mount bytes_read MiB | bytes asked MiB |"
echo "|---|---|---|---|---|---|---|---|---|---|"
for c in pread again memmap h5 lmdb small1 small2 small3; do
  for fs in "${fss[@]}"; do
    k=$c,$fs
    [[ -n ${rate[$k]:-} ]] || continue
    g=${pgets[${c%[123]},$fs]:--}
    [[ $c != again && $c != small[23] ]] || g='"'
    if [[ $fs == hintfs* ]]; then
      h="${hgets[$k]} | $((srcb[$k] / mib)) | $((mread[$k] / mib))"
    else h="- | - | -"; fi
    printf '| %s | %s | %.0f | %s | %s | %s | %s | %s |\n' "$c" "$fs" "${rate[$k]}" "${wrong[$k]}" "${errs[$k]}" \
      "$g" "$h" "$((asked[$k] / mib))"
    ((wrong[$k] == 0 && errs[$k] == 0)) || bad=1
  done
done
if ((bad)); then echo; echo "packed-bench: some reads were wrong or failed (above)" >&2; exit 1; fi
echo
echo "0 wrong bytes and 0 errors everywhere."
