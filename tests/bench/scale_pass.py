"""The scale benchmark, the reader's side (run by scale-bench.sh with the system python3,
which has torch and torchvision).

  scale_pass.py scan ROOT                   seconds of torchvision's ImageFolder scan of ROOT
  scale_pass.py pass ROOT SAMPLES [PID]     one DataLoader pass: 4 workers, batch 256, a seeded
                                            shuffle (RandomSampler, seed 0) of SAMPLES samples,
                                            the raw bytes of each file read (no decode: the tree's
                                            files are 256 B stand-ins). Prints JSON: seconds,
                                            images/s, and with PID the CPU seconds that process
                                            spent over the pass (utime + stime, /proc/PID/stat),
                                            in all and by thread name, and the wall-clock
                                            times (s since the epoch) the reads began and
                                            ended (the GC log's window).

The same seed draws the same SAMPLES files in every pass, so a second pass reads what the first
one cached.
"""

import json
import warnings
import os
import sys
import time

import torch
from torch.utils.data import DataLoader, RandomSampler
from torchvision.datasets import ImageFolder

warnings.filterwarnings("ignore", message="This DataLoader will create")


def read_bytes(path):
    with open(path, "rb") as f:
        return f.read()


def collate(batch):
    return sum(len(b) for b, _ in batch)


def cpu_seconds(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def threads(pid):
    """CPU seconds by thread name (digits and dashes stripped) of the threads of PID alive now."""
    out = {}
    for tid in os.listdir("/proc/%d/task" % pid):
        try:
            with open("/proc/%d/task/%s/stat" % (pid, tid)) as f:
                stat = f.read()
        except OSError:
            continue
        name = stat[stat.index("(") + 1 : stat.rindex(")")].rstrip("0123456789-")
        fields = stat.rsplit(")", 1)[1].split()
        cpu = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        out[(tid, name)] = cpu
    return out


def by_thread(before, after):
    """CPU seconds by thread name over a pass (threads gone by its end are not counted)."""
    sums = {}
    for key, cpu in after.items():
        sums[key[1]] = sums.get(key[1], 0.0) + cpu - before.get(key, 0.0)
    return dict(sorted(((k, round(v, 2)) for k, v in sums.items() if v >= 0.05), key=lambda kv: -kv[1]))


def timed(loader, samples, pid):
    """Reads every batch of LOADER (SAMPLES samples of 256 B) and returns the pass's figures: its
    seconds, images/s, the CPU seconds of process PID (0: none) in all and by thread, its wall
    clock span. Exits if a byte is missing."""
    cpu0 = cpu_seconds(pid) if pid else 0.0
    t0s = threads(pid) if pid else {}
    t0 = time.monotonic()
    wall0 = time.time()
    total = 0
    for n in loader:
        total += n
    secs = time.monotonic() - t0
    wall1 = time.time()
    cpu = cpu_seconds(pid) - cpu0 if pid else 0.0
    per_thread = by_thread(t0s, threads(pid)) if pid else {}
    if total != samples * 256:
        sys.exit("read %d bytes, expected %d" % (total, samples * 256))
    return {
        "seconds": secs,
        "images_per_s": samples / secs,
        "samples": samples,
        "cpu_s": cpu,
        "threads": per_thread,
        "wall": [wall0, wall1],
    }


def main():
    mode, root = sys.argv[1], sys.argv[2]
    t0 = time.monotonic()
    ds = ImageFolder(root, loader=read_bytes)
    scan = time.monotonic() - t0
    if mode == "scan":
        print(json.dumps({"scan_s": scan, "files": len(ds)}))
        return
    samples = int(sys.argv[3])
    pid = int(sys.argv[4]) if len(sys.argv) > 4 and sys.argv[4] else 0
    g = torch.Generator()
    g.manual_seed(0)
    loader = DataLoader(
        ds,
        batch_size=256,
        num_workers=4,
        sampler=RandomSampler(ds, num_samples=samples, generator=g),
        collate_fn=collate,
    )
    print(json.dumps(timed(loader, samples, pid)))


if __name__ == "__main__":
    main()
