"""Issue 39's probe of a mounted hintfs daemon (tests/bench/replay-bench.sh runs it).

seed MOUNT PID EPOCH: declares the mount's root as the dataset (job "bench"), then writes
  `seed 0 epoch EPOCH sampler random` and prints: the write's seconds and what it answered (ok,
  or the errno's name), the seconds until the line was applied (the first stats read after the
  write that answered within its 2 s wait with the stream's order in place: an upper bound), and
  the daemon's RSS growth over that time (sampled every 20 ms: the peak, and 2 s after).
epochs MOUNT PID LAST: two streams seeded 0 and 1 at epoch 0; `epoch 1..LAST` for one of them, and the
  transitions into epochs 1-5 (the other) and LAST-4..LAST timed, alternating: a write returns
  once its line is applied.
"""
import errno
import json
import os
import sys
import threading
import time


def rss_mb(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024.0
    return 0.0


def write(fd, line):
    t0 = time.perf_counter()
    try:
        os.write(fd, (line + "\n").encode())
        answer = "ok"
    except OSError as e:
        answer = errno.errorcode.get(e.errno, str(e.errno))
    return time.perf_counter() - t0, answer


def stats(mnt):
    t0 = time.perf_counter()
    with open(os.path.join(mnt, ".hintfs", "stats")) as f:
        s = json.load(f)
    return s, time.perf_counter() - t0


def stream_length(s, job):
    for st in s.get("streams", []):
        if str(st.get("job", "")).endswith(job):
            return st.get("length", 0)
    return 0


def seed(mnt, pid, epoch):
    fd = os.open(os.path.join(mnt, ".hintfs", "control"), os.O_WRONLY)
    dt, answer = write(fd, "job bench dataset .")
    s, _ = stats(mnt)
    n = s["hints"]["samples"]
    print("dataset: %d samples, %.2f s (%s)" % (n, dt, answer))
    time.sleep(1)
    base = rss_mb(pid)
    peak = [base]
    done = threading.Event()

    def sample():
        while not done.is_set():
            peak[0] = max(peak[0], rss_mb(pid))
            time.sleep(0.02)

    threading.Thread(target=sample, daemon=True).start()
    t0 = time.perf_counter()
    dt, answer = write(fd, "job bench seed 0 epoch %d sampler random" % epoch)
    while True:
        s, waited = stats(mnt)
        if waited < 1.9 and stream_length(s, "bench") == n:
            break
    applied = time.perf_counter() - t0
    time.sleep(2)
    done.set()
    after = rss_mb(pid)
    os.close(fd)
    print("seed epoch %d: write %.3f s (%s), applied within %.3f s, RSS +%.0f MB peak, +%.0f MB 2 s"
          " after (base %.0f MB)" % (epoch, dt, answer, applied, peak[0] - base, after - base, base))


def epochs(mnt, pid, last):
    """Stream a (seed 0) goes through epochs 1..last-5 (the JIT warms up), then stream b (seed 1,
    started at epoch 0) and a alternate: b's epochs 1..5 and a's last 5, so that both are timed
    side by side, warm, under the same load."""
    fd = os.open(os.path.join(mnt, ".hintfs", "control"), os.O_WRONLY)
    for job, seed in (("a", 0), ("b", 1)):
        write(fd, "job %s dataset ." % job)
        write(fd, "job %s seed %d epoch 0 sampler random" % (job, seed))
    for e in range(1, last - 4):
        write(fd, "job a epoch %d" % e)
    early, late = [], []
    for i in range(1, 6):
        for job, e, out in (("b", i, early), ("a", last - 5 + i, late)):
            dt, answer = write(fd, "job %s epoch %d" % (job, e))
            if answer != "ok":
                print("job %s epoch %d answered %s" % (job, e, answer))
            out.append(dt)
    os.close(fd)
    first = sorted(early)[2]
    final = sorted(late)[2]
    print("epoch transition (write until applied), median of 5: epochs 1-5 %.4f s, epochs %d-%d"
          " %.4f s: %.2fx" % (first, last - 4, last, final, final / first))


if __name__ == "__main__":
    mode, mnt, pid, arg = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    (seed if mode == "seed" else epochs)(mnt, pid, arg)
