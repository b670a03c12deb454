"""Read a hintfs mount with DistributedSampler(seed) after telling it a seed, and measure.

Usage: /usr/bin/python3 seed_prefetch_check.py MOUNT SOURCE SAMPLER_SEED HINT_SEED EPOCHS
Rank 0 of 2, batch BATCH (env, default 16), WORKERS DataLoader workers (env, default 4). Every
byte string is compared with the source. Prints one JSON line: opens served locally after the first
2 x WORKERS batches of each epoch (the batches the DataLoader requests at once when an epoch
starts, before anything can be prefetched) (from the mount's stats), the same for the opens
before them (the epoch's head: what was prefetched between the hint and the loader's start), the
share of them that missed although their prefetch was under way (late), elapsed seconds, and the
prediction's stats.
"""
import hashlib
import json
import os
import sys
import time

from torch.utils.data import DataLoader, DistributedSampler
from torchvision.datasets import ImageFolder

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..", "..", "mount-scripts"))
from hintfs_hints import Hints  # noqa: E402


def raw(path):
    with open(path, "rb") as f:
        return f.read()


def late(stats):
    """Misses whose prefetch had been asked for but had not landed when the reader opened them."""
    return sum(st["misses_prefetch_late"] for st in stats["streams"])


def keep(batch):
    return batch


def main(mount, source, sampler_seed, hint_seed, epochs):
    ds = ImageFolder(os.path.join(mount, "train"), loader=raw)
    want = [hashlib.sha256(raw(p.replace(mount, source, 1))).hexdigest() for p, _ in ds.samples]
    hints = Hints(mount, dataset="train")
    sampler = DistributedSampler(ds, num_replicas=2, rank=0, shuffle=True, seed=sampler_seed)
    batch_size = int(os.environ.get("BATCH", "16"))
    workers = int(os.environ.get("WORKERS", "4"))
    first = 2 * workers  # the loader asks for num_workers x prefetch_factor batches at once
    loader = DataLoader(ds, batch_size=batch_size, sampler=sampler, num_workers=workers,
                        collate_fn=keep)
    local = opens = late_misses = 0
    head_local = head_opens = 0
    s = hints.stats()
    h_end, m_end = s["open_hits"], s["open_misses"]  # where the previous epoch ended
    t0 = time.time()
    for epoch in range(epochs):
        sampler.set_epoch(epoch)
        hints.send("seed %d epoch %d world 2 rank 0" % (hint_seed, epoch))
        order = list(sampler)
        k = 0
        for b, batch in enumerate(loader):
            if b == first:
                s = hints.stats()
                h0, m0, l0 = s["open_hits"], s["open_misses"], late(s)
                head_local += h0 - h_end
                head_opens += h0 - h_end + m0 - m_end
            for data, _ in batch:
                assert hashlib.sha256(data).hexdigest() == want[order[k]], "wrong bytes"
                k += 1
        s = hints.stats()
        h_end, m_end = s["open_hits"], s["open_misses"]
        local += s["open_hits"] - h0
        late_misses += late(s) - l0
        opens += s["open_hits"] + s["open_misses"] - h0 - m0
    print(json.dumps({"local_after_first_batches": local / opens, "opens": opens,
                      "local_first_batches": head_local / max(head_opens, 1),
                      "first_batches_opens": head_opens,
                      "late_after_first_batches": late_misses / opens,
                      "seconds": time.time() - t0, "prediction": hints.stats()["prediction"]}))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]))
