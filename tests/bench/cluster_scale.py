"""Issue 39's cluster benchmark at 1.28 M files, the reader's side (run by cluster-scale-bench.sh
with the system python3, which has torch and torchvision). The scan, the CPU and the per-thread
accounting are scale_pass.py's, imported from beside this file.

  cluster_scale.py ports                      three loopback ports P, each with P + 100 free too
                                              (JGroups' failure detection), on one line
  cluster_scale.py wait T0 MNT...             polls each mount's .hintfs/stats until its cluster
                                              view has as many members as MNTs are given and no
                                              rebalance runs; prints JSON: per mount the seconds
                                              from T0 (s since the epoch) until it did, its view
                                              changes and topologies then (fails after 300 s)
  cluster_scale.py pass ROOT WORLD RANK SAMPLES [PID]
                                              one DataLoader pass as scale_pass.py's, but rank
                                              RANK's share of DistributedSampler(world WORLD,
                                              seed 0, epoch 0): its first SAMPLES indices, 2
                                              workers, batch 256, raw bytes. Same JSON
  cluster_scale.py table SAMPLES WORK         the Markdown tables from WORK's files (the script's)

The same seed, epoch and rank draw the same files in every pass, so a second pass reads what the
first one brought to the mount.
"""

import json
import os
import re
import socket
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def free(port):
    s = socket.socket()
    try:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind(("127.0.0.1", port))
        return True
    except OSError:
        return False
    finally:
        s.close()


def ports():
    """Three ports of 17700-17899 (below the ephemeral range: no outgoing connection takes them
    meanwhile), each free with its + 100."""
    out = []
    for p in range(17700 + os.getpid() % 150, 17900):
        if free(p) and free(p + 100) and all(abs(p - q) != 100 for q in out):
            out.append(p)
            if len(out) == 3:
                print(" ".join(map(str, out)))
                return
    sys.exit("no three free ports with their + 100 in 17700-17999")


def stats(mnt):
    with open(os.path.join(mnt, ".hintfs", "stats")) as f:
        return json.load(f)


def wait(t0, mnts):
    done = {}
    deadline = time.time() + 300
    while len(done) < len(mnts):
        for m in mnts:
            if m in done:
                continue
            c = stats(m).get("cluster") or {}
            if len(c.get("members", [])) == len(mnts) and not c.get("rebalancing", True):
                done[m] = {
                    "s": time.time() - t0,
                    "view_changes": c.get("view_changes"),
                    "topologies": c.get("topologies"),
                    "members": c.get("members"),
                }
        if time.time() > deadline:
            sys.exit("cluster_scale: no view of %d without a rebalance within 300 s: %s" % (
                len(mnts), {m: (stats(m).get("cluster") or {}) for m in mnts if m not in done}))
        time.sleep(0.1)
    print(json.dumps([done[m] for m in mnts]))


def one_pass(root, world, rank, samples, pid):
    import itertools
    import warnings

    import scale_pass as sp
    from torch.utils.data import DataLoader, DistributedSampler
    from torchvision.datasets import ImageFolder

    warnings.filterwarnings("ignore", message="This DataLoader will create")
    ds = ImageFolder(root, loader=sp.read_bytes)
    sampler = DistributedSampler(ds, num_replicas=world, rank=rank, shuffle=True, seed=0)
    sampler.set_epoch(0)
    indices = list(itertools.islice(iter(sampler), samples))
    loader = DataLoader(ds, batch_size=256, num_workers=2, sampler=indices, collate_fn=sp.collate)
    print(json.dumps(sp.timed(loader, len(indices), pid)))


def load(path):
    with open(path) as f:
        return json.load(f)


def table(samples, work):
    """The script left in WORK: mount-I.s, join.json, scan.json, rss-STAGE-I, passP-I.json, gc-I.txt,
    seed-I.txt (replay_probe.py's line), stats-STAGE-I.json."""
    def text(path):
        with open(path) as f:
            return f.read().strip()

    joined = load(os.path.join(work, "join.json"))
    members = range(3)
    passes = {p: [load(os.path.join(work, "pass%d-%d.json" % (p, i))) for i in members] for p in (1, 2)}
    scan = load(os.path.join(work, "scan.json"))
    seed_re = re.compile(r"write ([0-9.]+) s \((\w+)\), applied within ([0-9.]+) s, RSS \+(-?\d+) MB peak")
    print("3 members on one host (2 cores), one local tree of 1,281,000 files of 256 B; mounted one after"
          " another, default options; ImageFolder scan through member 0: %.1f s; each pass: the 3 ranks"
          " at once, %d samples per rank (DistributedSampler world 3, seed 0, epoch 0), 2 workers each,"
          " batch 256, raw bytes; seed hints written to one member after another" % (scan["scan_s"], samples))
    print()
    print("| member | mount s | view of 3, rebalanced: s after the last mount | RSS MB after mount+join / scan"
          " / reads / seed hint | images/s, pass 1 / pass 2 (measured) | daemon CPU s in pass 2"
          " | GC pauses in pass 2: max / p99 ms (n, full; CPU ms of the max) "
          "| seed 0 epoch 89: write s (answer), applied within s, RSS peak growth MB |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for i in members:
        rss = " / ".join(text(os.path.join(work, "rss-%s-%d" % (s, i))) for s in ("mount", "scan", "pass2", "seed"))
        m = seed_re.search(text(os.path.join(work, "seed-%d.txt" % i)))
        seed = "%s (%s), %s, +%s" % m.groups() if m else text(os.path.join(work, "seed-%d.txt" % i))
        print("| %d | %.1f | %.1f | %s | %.0f / %.0f | %.1f | %s | %s |" % (
            i, float(text(os.path.join(work, "mount-%d.s" % i))), joined[i]["s"], rss,
            passes[1][i]["images_per_s"], passes[2][i]["images_per_s"], passes[2][i]["cpu_s"],
            text(os.path.join(work, "gc-%d.txt" % i)), seed))
    job = []
    for p in (1, 2):
        w0 = min(r["wall"][0] for r in passes[p])
        w1 = max(r["wall"][1] for r in passes[p])
        job.append(sum(r["samples"] for r in passes[p]) / (w1 - w0))
    total_rss = [sum(int(text(os.path.join(work, "rss-%s-%d" % (s, i)))) for i in members)
                 for s in ("mount", "scan", "pass2", "seed")]
    print("| job | %.1f (sum) | %.1f (last) | %s (sum) | %.0f / %.0f | %.1f (sum) | - | - |" % (
        sum(float(text(os.path.join(work, "mount-%d.s" % i))) for i in members),
        max(j["s"] for j in joined), " / ".join(map(str, total_rss)), job[0], job[1],
        sum(r["cpu_s"] for r in passes[2])))
    print()
    print("Cluster counters (stats' `cluster`) at the view of 3 / after pass 1 / after pass 2:")
    print()
    keys = ["homed_files", "guest_files", "reads_from_peers", "served_to_peers", "source_reads_as_home",
            "reads_from_former_homes", "peer_failures", "peer_hedged", "peer_skipped", "view_changes",
            "topologies"]
    print("| member | " + " | ".join(keys) + " |")
    print("|" + " --- |" * (len(keys) + 1))
    for i in members:
        cells = []
        snaps = [load(os.path.join(work, "stats-%s-%d.json" % (s, i))).get("cluster") or {}
                 for s in ("mount", "pass1", "pass2")]
        for k in keys:
            cells.append(" / ".join(str(s.get(k, "-")) for s in snaps))
        print("| %d | %s |" % (i, " | ".join(cells)))


if __name__ == "__main__":
    mode = sys.argv[1]
    if mode == "ports":
        ports()
    elif mode == "wait":
        wait(float(sys.argv[2]), sys.argv[3:])
    elif mode == "pass":
        one_pass(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]),
                 int(sys.argv[6]) if len(sys.argv) > 6 and sys.argv[6] else 0)
    elif mode == "table":
        table(int(sys.argv[2]), sys.argv[3])
    else:
        sys.exit(__doc__)
