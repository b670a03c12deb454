"""Train a small CNN with SHADE-style loss-based importance sampling and record the trace.

Usage: /usr/bin/python3 record_importance_trace.py OUT_TRACE [--data DIR] [--epochs N] [--seed S]

The data: scikit-learn's handwritten digits (1,797 8x8 images, `apt-get install python3-sklearn`),
written out once as an ImageFolder of PNGs under DIR (default /tmp/hintfs-digits). The training:
a small CNN on CPU; each epoch draws len(dataset) indices with torch.multinomial(weights,
replacement=True), where a sample's weight is its SHADE rank score log(rank + 10) from the last
batch it was in (rank = number of samples in that batch with a smaller loss; 1.0 before a sample
is seen). The trace, in hintfs's format: one "<epoch> <sample> <size> <class>" line per read (the
sample is the ImageFolder index, the size that of its PNG) and one "loss <sample>=<loss> ..." line
after each batch. `hintfs simulate --trace OUT_TRACE` replays it.
"""
import argparse
import math
import os

import torch
from torch import nn
from torch.utils.data import DataLoader, Subset
from torchvision import datasets, transforms


def write_digits(root):
    if os.path.isdir(os.path.join(root, "0")):
        return
    from PIL import Image
    from sklearn.datasets import load_digits
    d = load_digits()
    for i, (img, label) in enumerate(zip(d.images, d.target)):
        cls = os.path.join(root, str(label))
        os.makedirs(cls, exist_ok=True)
        Image.fromarray((img * 255 / 16).astype("uint8")).resize((16, 16)).save(
            os.path.join(cls, "%04d.png" % i))


class Indexed(torch.utils.data.Dataset):
    def __init__(self, ds):
        self.ds = ds

    def __len__(self):
        return len(self.ds)

    def __getitem__(self, i):
        x, y = self.ds[i]
        return x, y, i


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--data", default="/tmp/hintfs-digits")
    ap.add_argument("--epochs", type=int, default=8)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--batch", type=int, default=64)
    args = ap.parse_args()
    write_digits(args.data)
    torch.manual_seed(args.seed)
    ds = datasets.ImageFolder(args.data, transform=transforms.Compose(
        [transforms.Grayscale(), transforms.ToTensor()]))
    n = len(ds)
    sizes = [os.path.getsize(p) for p, _ in ds.samples]
    model = nn.Sequential(nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                          nn.Flatten(), nn.Linear(16 * 8 * 8, 10))
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    loss_fn = nn.CrossEntropyLoss(reduction="none")
    weights = torch.ones(n)
    with open(args.out, "w") as out:
        out.write("# hintfs trace v1: digits ImageFolder (%d samples), SHADE importance sampling,"
                  " %d epochs, batch %d, seed %d\n" % (n, args.epochs, args.batch, args.seed))
        for epoch in range(args.epochs):
            order = torch.multinomial(weights, n, replacement=True)
            loader = DataLoader(Indexed(Subset(ds, order.tolist())), batch_size=args.batch)
            correct = 0
            for x, y, pos in loader:
                idx = order[pos]
                losses = loss_fn(model(x), y)
                opt.zero_grad()
                losses.mean().backward()
                opt.step()
                lv = losses.detach()
                for i in idx.tolist():
                    out.write("%d %d %d %d\n" % (epoch, i, sizes[i], ds.targets[i]))
                out.write("loss " + " ".join("%d=%.5f" % (i, l) for i, l in
                                             zip(idx.tolist(), lv.tolist())) + "\n")
                for k, i in enumerate(idx.tolist()):
                    rank = int((lv < lv[k]).sum())
                    weights[i] = math.log(rank + 10)
            with torch.no_grad():
                for x, y in DataLoader(ds, batch_size=512):
                    correct += (model(x).argmax(1) == y).sum().item()
            print("epoch %d: train accuracy %.3f" % (epoch, correct / n))


if __name__ == "__main__":
    main()
