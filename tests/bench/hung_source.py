#!/usr/bin/python3
"""Cached reads while the source hangs: what hung-source-bench.sh measures through a mount.

Usage: hung_source.py MNT SRC S3PID [--seconds S] [--missers M] [--cached-readers C] [--no-stop]

The mount serves SRC (a copy of the dataset on local disk, to check bytes against); half of its class
directories are cached (the first half, sorted), the rest are not. Two phases of S seconds each,
C threads reading cached files whole, every byte checked, each file's pages dropped from the page
cache after its read (posix_fadvise DONTNEED) so that every read reaches the daemon:
  answering: the source answers;
  hung:      S3PID is stopped (SIGSTOP: its connections stay open and nothing answers) and M threads
             each open and read one uncached file, then go on to the next; during the phase an
             `os.walk` of the whole mount and a read of .hintfs/stats are timed.
With --no-stop the source answers in the second phase too (the missers only load it: many misses
on a healthy source far away). Then the source is continued (SIGCONT) and every uncached file read during the hang is read again
and checked. Prints one JSON line: files/s and the slowest read of each phase, the walk and stats
seconds, the uncached reads that finished during the hang, and wrong bytes or errors.
"""
import argparse
import json
import multiprocessing as mp
import os
import random
import signal
import sys
import threading
import time


def files_under(root, dirs):
    out = []
    for d in dirs:
        for name in sorted(os.listdir(os.path.join(root, d))):
            out.append(os.path.join(d, name))
    return out


def read_whole(path):
    fd = os.open(path, os.O_RDONLY)
    try:
        chunks = []
        while True:
            b = os.read(fd, 1 << 20)
            if not b:
                break
            chunks.append(b)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        return b"".join(chunks)
    finally:
        os.close(fd)


def cached_phase(mnt, src, files, threads, seconds, seed):
    stop = time.monotonic() + seconds
    counts, slowest, wrong, errors = [0] * threads, [0.0] * threads, [0], []

    def reader(i):
        rnd = random.Random(seed * 100 + i)
        while time.monotonic() < stop:
            rel = rnd.choice(files)
            t0 = time.monotonic()
            try:
                b = read_whole(os.path.join(mnt, rel))
            except OSError as e:
                errors.append("%s: %s" % (rel, e))
                continue
            dt = time.monotonic() - t0
            slowest[i] = max(slowest[i], dt)
            with open(os.path.join(src, rel), "rb") as f:
                if f.read() != b:
                    wrong[0] += 1
            counts[i] += 1

    ts = [threading.Thread(target=reader, args=(i,)) for i in range(threads)]
    t0 = time.monotonic()
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    elapsed = time.monotonic() - t0
    return {
        "files_per_s": round(sum(counts) / elapsed, 1),
        "slowest_s": round(max(slowest), 4),
        "wrong": wrong[0],
        "errors": errors[:5],
    }


def run_missers(mnt, uncached, n, hung, next_miss, done_in_hang, errors):
    """N threads each read uncached files, one after another, until the hang ends."""

    def misser():
        while True:
            with next_miss.get_lock():
                i = next_miss.value
                if i >= len(uncached):
                    return
                next_miss.value = i + 1
            try:
                read_whole(os.path.join(mnt, uncached[i]))
                if hung.value:
                    with done_in_hang.get_lock():
                        done_in_hang.value += 1
            except OSError:
                with errors.get_lock():
                    errors.value += 1
            if not hung.value:
                return

    ts = [threading.Thread(target=misser) for _ in range(n)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("mnt")
    ap.add_argument("src")
    ap.add_argument("s3pid", type=int)
    ap.add_argument("--seconds", type=float, default=10)
    ap.add_argument("--missers", type=int, default=40)
    ap.add_argument("--cached-readers", type=int, default=4)
    ap.add_argument(
        "--no-stop",
        action="store_true",
        help="leave the source answering in the second phase: only the missers load it",
    )
    a = ap.parse_args()
    dirs = sorted(d for d in os.listdir(a.src) if os.path.isdir(os.path.join(a.src, d)))
    cached = files_under(a.src, dirs[: len(dirs) // 2])
    uncached = files_under(a.src, dirs[len(dirs) // 2 :])
    random.Random(1).shuffle(uncached)

    out = {"cached_files": len(cached), "uncached_files": len(uncached)}
    out["answering"] = cached_phase(a.mnt, a.src, cached, a.cached_readers, a.seconds, 1)

    if not a.no_stop:
        os.kill(a.s3pid, signal.SIGSTOP)
    # The missers run in a process of their own: in this one they would hold the GIL the cached
    # readers need, and their wait would show as the cached reads' (the mount's is what is measured).
    hung = mp.Value("b", 1)
    next_miss = mp.Value("i", 0)
    done_in_hang = mp.Value("i", 0)
    miss_errors = mp.Value("i", 0)
    try:
        missers = mp.Process(
            target=run_missers,
            args=(a.mnt, uncached, a.missers, hung, next_miss, done_in_hang, miss_errors),
        )
        missers.start()
        time.sleep(1)  # the missers are waiting on the source by now
        side = {}

        def walk():
            t0 = time.monotonic()
            n = sum(len(fs) for _, _, fs in os.walk(a.mnt))
            side["walk_s"] = round(time.monotonic() - t0, 3)
            side["walk_files"] = n

        def stats():
            t0 = time.monotonic()
            with open(os.path.join(a.mnt, ".hintfs/stats"), "rb") as f:
                json.loads(f.read())
            side["stats_s"] = round(time.monotonic() - t0, 3)

        sts = [threading.Thread(target=walk), threading.Thread(target=stats)]
        for t in sts:
            t.start()
        out["hung"] = cached_phase(a.mnt, a.src, cached, a.cached_readers, a.seconds, 2)
        for t in sts:
            t.join(timeout=60)
        out["hung"].update(side)
    finally:
        hung.value = 0
        if not a.no_stop:
            os.kill(a.s3pid, signal.SIGCONT)
    out["hung"]["uncached_read_during_hang"] = done_in_hang.value
    missers.join(timeout=120)
    touched = uncached[: min(next_miss.value, len(uncached))]
    wrong = 0
    errors = []
    for rel in touched:
        try:
            b = read_whole(os.path.join(a.mnt, rel))
        except OSError as e:
            errors.append("%s: %s" % (rel, e))
            continue
        with open(os.path.join(a.src, rel), "rb") as f:
            wrong += f.read() != b
    out["after"] = {
        "uncached_checked": len(touched),
        "wrong": wrong,
        "errors": errors[:5],
        "error_count_during_hang": miss_errors.value,
    }
    ans, hg = out["answering"]["files_per_s"], out["hung"]["files_per_s"]
    out["hung_over_answering"] = round(hg / ans, 3) if ans else None
    print(json.dumps(out))
    sys.exit(0 if wrong == 0 and not errors else 1)


if __name__ == "__main__":
    main()
