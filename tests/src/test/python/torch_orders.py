"""Print the orders real PyTorch samplers produce, as SHA-256 digests of "i0,i1,...".

Usage: /usr/bin/python3 torch_orders.py < cases.json   (a JSON list of cases)
A case is {"kind": "distributed", n, world, rank, shuffle, seed, epoch, drop_last}
or {"kind": "dataloader", n, seed, epochs, persistent}. Prints a JSON list of digest lists.
"""
import hashlib
import json
import sys

import torch
from torch.utils.data import DataLoader, DistributedSampler


def digest(indices):
    return hashlib.sha256(",".join(map(str, indices)).encode()).hexdigest()


class Range(torch.utils.data.Dataset):
    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return i


def collate(batch):
    return batch


out = []
for c in json.load(sys.stdin):
    if c["kind"] == "distributed":
        s = DistributedSampler(Range(c["n"]), num_replicas=c["world"], rank=c["rank"],
                               shuffle=c["shuffle"], seed=c["seed"], drop_last=c["drop_last"])
        s.set_epoch(c["epoch"])
        out.append([digest(list(s))])
    else:
        g = torch.Generator()
        g.manual_seed(c["seed"])
        persistent = c["persistent"]
        dl = DataLoader(Range(c["n"]), batch_size=64, shuffle=True, generator=g,
                        num_workers=2 if persistent else 0, persistent_workers=persistent,
                        collate_fn=collate)
        epochs = []
        for _ in range(c["epochs"]):
            order = []
            for batch in dl:
                order.extend(batch)
            epochs.append(digest(order))
        out.append(epochs)
print(json.dumps(out))
