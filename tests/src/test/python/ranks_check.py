"""A DDP-style job on one node reading a hintfs mount: one process per rank (as torchrun starts
them), each with DistributedSampler over ImageFolder and a DataLoader with workers.

Usage: /usr/bin/python3 ranks_check.py MOUNT SOURCE [--world W] [--seed S] [--epochs E]
       [--workers K] [--batch B] [--root DIR] [--no-hints | --no-control | --plain]
       [--no-set-epoch]
       [--kill-rank R --kill-after B] [--drop-caches] [--step-ms MS] [--open-log]

The launcher (this process) starts W rank processes and waits; each rank checks every byte it
reads against the source and reports, per epoch, its seconds and the share of its opens served
locally after its first batches (what its workers ask for at once, before anything can be
prefetched), from its own stream's counters in the mount's stats. With --kill-rank, that rank
SIGKILLs itself after B batches of epoch 0 and the launcher measures how long the mount takes to
end its stream. With --drop-caches, every rank waits at a barrier before each epoch while the
launcher drops the page cache (root). --plain reads a mount that is not hintfs (s3fs, rclone): no
hints, no stats. Prints one JSON line, with the node's images/s per epoch (every rank's samples
over the slowest rank's seconds).
"""
import argparse
import hashlib
import json
import os
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "..", "mount-scripts"))


def raw(path):
    with open(path, "rb") as f:
        return f.read()


def keep(batch):
    return batch


class TimedLoader:
    """ImageFolder's loader that logs each sample's open: monotonic ns before the open and after
    the last byte, and the path under the mount, one line per sample in a file of each process."""

    def __init__(self, mount, sync):
        self.mount = mount.rstrip("/") + "/"
        self.sync = sync
        self.files = {}

    def __call__(self, path):
        t0 = time.monotonic_ns()
        data = raw(path)
        t1 = time.monotonic_ns()
        f = self.files.get(os.getpid())
        if f is None:  # a DataLoader worker, forked: a file of its own
            f = open(os.path.join(self.sync, "opens.%s.%d" % (os.environ["RANK"], os.getpid())),
                     "a", buffering=1)
            self.files[os.getpid()] = f
        f.write("%d %d %s\n" % (t0, t1, path[len(self.mount):]))
        return data


def my_stream(stats):
    for s in stats.get("streams", []):
        if s["owner_pid"] == os.getpid():
            return s
    return {"hits": 0, "opens": 0}


class Recorded:
    """A sampler that remembers the order it yielded (and tells nobody)."""

    def __init__(self, sampler):
        self.sampler = sampler
        self.order = []

    def __len__(self):
        return len(self.sampler)

    def __iter__(self):
        self.order = list(iter(self.sampler))
        return iter(self.order)


def barrier(dirpath, name, world):
    """Waits until every rank has touched dirpath/name.<rank> and the launcher its go file."""
    open(os.path.join(dirpath, "%s.%d" % (name, int(os.environ["RANK"]))), "w").close()
    while not os.path.exists(os.path.join(dirpath, name + ".go")):
        time.sleep(0.01)


def rank_main(a):
    from torch.utils.data import DataLoader, DistributedSampler
    from torchvision.datasets import ImageFolder
    from hintfs_hints import Hints

    rank = int(os.environ["RANK"])
    a.mount = os.environ.get("HINTFS_MOUNT", a.mount)
    loader_fn = TimedLoader(a.mount, a.sync) if a.open_log else raw
    ds = ImageFolder(os.path.join(a.mount, a.root), loader=loader_fn)
    want = [hashlib.sha256(raw(p.replace(a.mount, a.source, 1))).hexdigest() for p, _ in ds.samples]
    hints = None if a.plain or a.no_control else Hints(a.mount, dataset=a.root)
    stats_path = os.path.join(a.mount, ".hintfs", "stats")

    def stats():
        with open(stats_path) as f:
            return json.load(f)
    if a.unseeded:
        from torch.utils.data import RandomSampler
        sampler = Recorded(RandomSampler(ds))  # seeded from torch's global generator: unknowable
    else:
        sampler = DistributedSampler(ds, num_replicas=a.world, rank=rank, shuffle=True,
                                     seed=a.seed, drop_last=a.drop_last)
    if not a.no_hints and hints is not None:
        sampler = hints.follow(sampler)
    loader = DataLoader(ds, batch_size=a.batch, sampler=sampler, num_workers=a.workers,
                        collate_fn=keep)
    first = a.workers * 2  # batches the loader asks for at once (prefetch_factor 2)
    out = {"rank": rank, "pid": os.getpid(), "local": [], "seconds": [], "samples": []}
    for epoch in range(a.epochs):
        if a.drop_caches:
            barrier(a.sync, "epoch%d" % epoch, a.world)
        if not a.no_set_epoch and hasattr(sampler, "set_epoch"):
            sampler.set_epoch(epoch)
        order = None
        t0 = time.time()
        k = 0
        s0 = None
        for b, batch in enumerate(loader):
            if order is None:  # the loader has drawn this epoch's order by now
                order = list(sampler.order) if hasattr(sampler, "order") else list(sampler)
            if b == first and not a.plain:
                s0 = my_stream(stats())
            if a.misses_per_batch:
                cur = my_stream(stats())
                out.setdefault("misses", []).append(
                    (cur["opens"] - cur["hits"]) - (prev["opens"] - prev["hits"]) if b else 0)
                prev = cur
            for data, _ in batch:
                assert hashlib.sha256(data).hexdigest() == want[order[k]], "wrong bytes"
                k += 1
            if a.step_ms:
                time.sleep(a.step_ms / 1000)  # the training step the batch feeds
            if rank == a.kill_rank and epoch == 0 and b + 1 == a.kill_after:
                os.killpg(0, signal.SIGKILL)  # the rank and its workers, as a node agent would
        out["seconds"].append(time.time() - t0)
        out["samples"].append(k)
        if a.plain:
            continue
        st = stats()
        s1 = my_stream(st)
        out.setdefault("streams_seen", []).append(len(st["streams"]))
        out["stream"] = {k: s1.get(k) for k in ("rank", "world", "seed", "adopted", "job",
                                                "prediction", "detection", "off_order_opens",
                                                "misses_prefetch_late", "prefetched", "opens", "hits")}
        if s0 is not None and s1["opens"] > s0["opens"]:
            out["local"].append((s1["hits"] - s0["hits"]) / (s1["opens"] - s0["opens"]))
    with open(os.path.join(a.sync, "rank%d.json" % rank), "w") as f:
        json.dump(out, f)


def drop():
    subprocess.run(["sync"], check=True)
    with open("/proc/sys/vm/drop_caches", "w") as f:
        f.write("3")


def launcher(a):
    import tempfile
    a.sync = tempfile.mkdtemp(prefix="hintfs-ranks-")
    procs = []
    for r in range(a.world):
        env = dict(os.environ, RANK=str(r), HINTFS_SYNC=a.sync)
        if a.mounts:
            # Several nodes' mounts: ranks fill them in order, world/len(mounts) ranks to a node.
            nodes = a.mounts.split(",")
            env["HINTFS_MOUNT"] = nodes[r * len(nodes) // a.world]
        # Each rank leads its own process group, so that nothing it forked outlives the run.
        procs.append(subprocess.Popen([sys.executable] + sys.argv + ["--as-rank"], env=env,
                                      start_new_session=True))
    result = {"world": a.world, "ranks": []}
    if a.drop_caches:
        for epoch in range(a.epochs):
            name = "epoch%d" % epoch
            while sum(os.path.exists(os.path.join(a.sync, "%s.%d" % (name, r)))
                      for r in range(a.world)) < sum(p.poll() is None for p in procs):
                time.sleep(0.01)
            drop()
            open(os.path.join(a.sync, name + ".go"), "w").close()
    if a.kill_rank >= 0:
        victim = procs[a.kill_rank]
        victim.wait()
        t0 = time.time()
        ended = None
        while time.time() - t0 < 10:
            with open(os.path.join(a.mount, ".hintfs", "stats")) as f:
                st = json.load(f)
            if all(s["owner_pid"] != victim.pid for s in st["streams"]):
                ended = time.time() - t0
                break
            time.sleep(0.05)
        result["killed_pid"] = victim.pid
        result["killed_stream_ended_after_s"] = ended
    rc = 0
    for r, p in enumerate(procs):
        try:
            p.wait(timeout=500)
        except subprocess.TimeoutExpired:
            rc |= 1
        for pg in (p.pid,):
            try:
                os.killpg(pg, signal.SIGKILL)  # orphaned DataLoader workers, if any
            except ProcessLookupError:
                pass
        if r == a.kill_rank:
            continue
        rc |= p.returncode or 0
        path = os.path.join(a.sync, "rank%d.json" % r)
        if os.path.exists(path):
            with open(path) as f:
                result["ranks"].append(json.load(f))
            if a.open_log:
                opens = []
                for name in os.listdir(a.sync):
                    if name.startswith("opens.%d." % r):
                        with open(os.path.join(a.sync, name)) as f:
                            for line in f:
                                t0, t1, rel = line.rstrip("\n").split(" ", 2)
                                opens.append([int(t0), int(t1), rel])
                result["ranks"][-1]["opens"] = sorted(opens)
        else:
            result["ranks"].append({"rank": r, "failed": True})
            rc |= 1
    if not a.plain:
        with open(os.path.join(a.mount, ".hintfs", "stats")) as f:
            st = json.load(f)
        result["prediction"] = st["prediction"]
        result["source_reads"] = st["source_reads"]
        result["open_misses"] = st["open_misses"]
    # The node's images/s in each epoch: every rank's samples over the slowest rank's time.
    done = [r for r in result["ranks"] if "seconds" in r]
    result["node_images_per_s"] = [
        sum(r["samples"][e] for r in done) / max(r["seconds"][e] for r in done)
        for e in range(min((len(r["seconds"]) for r in done), default=0))]
    print(json.dumps(result))
    return rc


def main():
    p = argparse.ArgumentParser()
    p.add_argument("mount")
    p.add_argument("source")
    p.add_argument("--world", type=int, default=4)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--epochs", type=int, default=2)
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--batch", type=int, default=16)
    p.add_argument("--no-hints", action="store_true", help="a hintfs mount, no seed hints")
    p.add_argument("--plain", action="store_true", help="not a hintfs mount (s3fs, rclone)")
    p.add_argument("--no-control", action="store_true",
                   help="a hintfs mount, nothing written to its control file (stats still read)")
    p.add_argument("--no-set-epoch", action="store_true", help="never call set_epoch")
    p.add_argument("--drop-last", action="store_true", help="DistributedSampler(drop_last=True)")
    p.add_argument("--unseeded", action="store_true",
                   help="RandomSampler with no generator instead of DistributedSampler (world 1)")
    p.add_argument("--root", default="train", help="the ImageFolder root inside the mount")
    p.add_argument("--kill-rank", type=int, default=-1)
    p.add_argument("--kill-after", type=int, default=10)
    p.add_argument("--drop-caches", action="store_true")
    p.add_argument("--step-ms", type=float, default=0, help="a training step per batch (sleep)")
    p.add_argument("--misses-per-batch", action="store_true", help="diagnosis: slower")
    p.add_argument("--open-log", action="store_true",
                   help="report every sample's open (monotonic ns before and after, path)")
    p.add_argument("--as-rank", action="store_true")
    p.add_argument("--mounts", default="",
                   help="MOUNT,MOUNT,...: one mount per node of a job; rank r reads mount"
                        " r*len/world (MOUNT is then only the first)")
    a = p.parse_args()
    if a.as_rank:
        a.sync = os.environ["HINTFS_SYNC"]
        rank_main(a)
        return 0
    return launcher(a)


if __name__ == "__main__":
    sys.exit(main())
