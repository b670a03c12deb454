#!/usr/bin/python3
"""The readers of packed-bench.sh (issue 61): random reads inside large files, as a trainer makes them.

Usage (run with /usr/bin/python3, which has numpy, h5py and python3-lmdb):
  packed_reader.py make DIR SIZE        DIR/n00000000/: big.bin (SIZE bytes, random), samples.h5
                                        (6,000 samples of 96 KiB, one contiguous dataset "x"),
                                        samples.lmdb/data.mdb (6,000 values of 96 KiB, keys %08d);
                                        each kept if already there at its size
  packed_reader.py pread  MNT LOCAL SEED [N=1500] [SIZE=131072] [THREADS=4]
  packed_reader.py memmap MNT LOCAL SEED [N=1500] [TOKENS=1025] [PROCS=4]
  packed_reader.py h5     MNT LOCAL SEED [N=600] [PROCS=4]
  packed_reader.py lmdb   MNT LOCAL SEED [N=600] [PROCS=4]
MNT is the file (or LMDB directory) through the mount, LOCAL the same one on the local disk.
pread: os.pread of SIZE bytes at N random offsets (seeded), in THREADS threads of one process.
memmap: numpy.memmap(uint16) windows of TOKENS tokens at N random token offsets, h5: N random
samples (h5py, dataset[i]), lmdb: N random values (lmdb.open(readonly=True, lock=False), one read
transaction per worker); each in PROCS processes forked as a DataLoader's workers are, each opening
its own handle (the open is timed: s3fs fetches the whole file there). Worker w reads items w, w+P...
Each reader keeps what it read, stops its clock, then compares every item with LOCAL.
Prints one JSON line: rate (items/s over the wall time from the first worker's start to the last
one's end), n, bytes (bytes the readers asked for), wrong (bytes that differ from LOCAL, a short
read's missing bytes included), errors (reads that raised, or a worker that died: a SIGBUS of a
mapped read counts every item of that worker), seconds.
"""
import json, multiprocessing as mp, os, queue, random, sys, threading, time

import numpy as np

SAMPLES, SAMPLE = 6000, 96 * 1024


def diff(a, b):
    """Bytes of a that differ from b, plus the length difference."""
    a, b = np.frombuffer(memoryview(a).cast("B"), np.uint8), np.frombuffer(memoryview(b).cast("B"), np.uint8)
    n = min(len(a), len(b))
    return int(np.count_nonzero(a[:n] != b[:n])) + abs(len(a) - len(b))


def make(d, size):
    d = os.path.join(d, "n00000000")
    os.makedirs(d, exist_ok=True)
    rng = np.random.default_rng(61)
    big = os.path.join(d, "big.bin")
    if not os.path.exists(big) or os.path.getsize(big) != size:
        with open(big + ".part", "wb") as f:
            left = size
            while left:
                n = min(left, 64 << 20)
                f.write(rng.bytes(n))
                left -= n
        os.replace(big + ".part", big)
    h5 = os.path.join(d, "samples.h5")
    if not os.path.exists(h5):
        import h5py

        with h5py.File(h5 + ".part", "w") as f:
            ds = f.create_dataset("x", (SAMPLES, SAMPLE), dtype=np.uint8)  # no chunks: contiguous
            for i in range(0, SAMPLES, 500):
                ds[i : i + 500] = np.frombuffer(rng.bytes(500 * SAMPLE), np.uint8).reshape(500, SAMPLE)
            assert ds.id.get_create_plist().get_layout() == h5py.h5d.CONTIGUOUS
        os.replace(h5 + ".part", h5)
    env_dir = os.path.join(d, "samples.lmdb")
    if not os.path.exists(os.path.join(env_dir, "data.mdb")):
        import lmdb, shutil

        shutil.rmtree(env_dir + ".part", ignore_errors=True)
        env = lmdb.open(env_dir + ".part", map_size=1 << 30)
        for i in range(0, SAMPLES, 500):
            with env.begin(write=True) as txn:
                for j in range(i, i + 500):
                    txn.put(b"%08d" % j, rng.bytes(SAMPLE))
        env.close()
        os.remove(os.path.join(env_dir + ".part", "lock.mdb"))  # read-only readers open with lock=False
        os.replace(env_dir + ".part", env_dir)


def emit(n, nbytes, wrong, errors, t0, t1):
    print(json.dumps({"rate": n / (t1 - t0), "n": n, "bytes": nbytes, "wrong": wrong, "errors": errors,
                      "seconds": round(t1 - t0, 3)}))


def pread(mnt, local, seed, n=1500, size=131072, threads=4):
    total = os.path.getsize(local)
    rnd = random.Random(seed)
    offs = [rnd.randrange(0, total - size) for _ in range(n)]
    got = [None] * n
    errors = [0]

    def work(w):
        fd = os.open(mnt, os.O_RDONLY)
        try:
            for i in range(w, n, threads):
                try:
                    got[i] = os.pread(fd, size, offs[i])
                except OSError:
                    errors[0] += 1
        finally:
            os.close(fd)

    ts = [threading.Thread(target=work, args=(w,)) for w in range(threads)]
    t0 = time.monotonic()
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    t1 = time.monotonic()
    wrong = 0
    with open(local, "rb") as f:
        for i in range(n):
            if got[i] is not None:
                wrong += diff(got[i], os.pread(f.fileno(), size, offs[i]))
    emit(n, n * size, wrong, errors[0], t0, t1)


# The process readers: reader(path) opens a handle, get(handle, item) returns one item's bytes.
def mm_open(path):
    return np.memmap(path, dtype=np.uint16, mode="r")


def h5_open(path):
    import h5py

    return h5py.File(path, "r")["x"]


def lmdb_open(path):
    import lmdb

    return lmdb.open(path, readonly=True, lock=False, subdir=True).begin()


KINDS = {
    "memmap": (mm_open, lambda h, item: np.array(h[item[0] : item[0] + item[1]])),
    "h5": (h5_open, lambda h, item: h[item]),
    "lmdb": (lmdb_open, lambda h, item: h.get(b"%08d" % item)),
}


def worker(kind, mnt, local, items, start, out):
    opener, get = KINDS[kind]
    start.wait()
    t0 = time.monotonic()
    got, errors = [], 0
    try:
        h = opener(mnt)
    except Exception as e:  # one line, not a traceback: every item of this worker is an error
        print("packed_reader.py: %s: %s cannot be opened: %s" % (kind, mnt, e), file=sys.stderr)
        out.put((t0, time.monotonic(), 0, len(items)))
        return
    for it in items:
        try:
            got.append(get(h, it))
        except Exception:  # an I/O error of any reader (h5py raises OSError, lmdb lmdb.Error)
            got.append(None)
            errors += 1
    t1 = time.monotonic()
    ref, wrong = opener(local), 0
    for it, g in zip(items, got):
        if g is not None:
            wrong += diff(g, get(ref, it))
    out.put((t0, t1, wrong, errors))


def procs_read(kind, mnt, local, seed, n, procs, items, item_bytes):
    ctx = mp.get_context("fork")
    start, out = ctx.Barrier(procs + 1), ctx.Queue()
    ps = [ctx.Process(target=worker, args=(kind, mnt, local, items[w::procs], start, out)) for w in range(procs)]
    for p in ps:
        p.start()
    start.wait()
    ok, errors = [], 0
    while len(ok) < procs:
        try:
            ok.append(out.get(timeout=1))
        except queue.Empty:
            if not any(p.is_alive() for p in ps) and out.empty():
                break
    for p in ps:
        p.join()
    for w, p in enumerate(ps):
        if p.exitcode != 0:  # died (SIGBUS of a mapped read): every item of it is an error
            errors += len(items[w::procs])
    t0 = min(r[0] for r in ok) if ok else 0
    t1 = max(r[1] for r in ok) if ok else 1
    emit(n, n * item_bytes, sum(r[2] for r in ok), errors + sum(r[3] for r in ok), t0, t1)


def main(a):
    cmd = a[0]
    if cmd == "make":
        return make(a[1], int(a[2]))
    mnt, local, seed, rest = a[1], a[2], int(a[3]), [int(x) for x in a[4:]]
    rnd = random.Random(seed)
    if cmd == "pread":
        return pread(mnt, local, seed, *rest)
    if cmd == "memmap":
        n, tokens, procs = (rest + [1500, 1025, 4][len(rest) :])[:3]
        ntok = os.path.getsize(local) // 2
        items = [(rnd.randrange(0, ntok - tokens), tokens) for _ in range(n)]
        return procs_read("memmap", mnt, local, seed, n, procs, items, 2 * tokens)
    if cmd in ("h5", "lmdb"):
        n, procs = (rest + [600, 4][len(rest) :])[:2]
        items = rnd.sample(range(SAMPLES), n)
        return procs_read(cmd, mnt, local, seed, n, procs, items, SAMPLE)
    sys.exit("packed_reader.py: unknown command %r: make, pread, memmap, h5 or lmdb" % cmd)


if __name__ == "__main__":
    main(sys.argv[1:])
