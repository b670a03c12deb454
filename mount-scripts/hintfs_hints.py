"""Hints for a hintfs mount, from a PyTorch training loop. Standard library only.

    from hintfs_hints import Hints, HintSampler
    hints = Hints("/mnt/imagenet", dataset="train")       # the ImageFolder root, inside the mount
    ds = torchvision.datasets.ImageFolder("/mnt/imagenet/train", transform=tf)   # unchanged
    sampler = HintSampler(hints, len(ds))                 # remembers each epoch's order
    loader = DataLoader(ds, batch_size=64, sampler=sampler, num_workers=4)        # unchanged
    for epoch in range(epochs):
        hints.epoch(epoch)
        for b, (x, y) in enumerate(loader):
            losses = F.cross_entropy(model(x), y, reduction="none")
            hints.losses(sampler.batch(b, 64), losses.tolist())
            ...

Each call is one write to MOUNT/.hintfs/control. A line the mount rejects raises HintError
with the mount's reason (also kept in MOUNT/.hintfs/errors); nothing accepted before is lost.
"""
import errno
import json
import os
import random

__all__ = ["Hints", "HintError", "HintSampler"]


class HintError(ValueError):
    """The mount rejected a hint line."""


class Hints:
    """Writes hint lines to a hintfs mount's control file."""

    def __init__(self, mount, dataset=None):
        self.mount = os.path.abspath(mount)
        self._dir = os.path.join(self.mount, ".hintfs")
        if not os.path.isdir(self._dir):
            raise HintError("%s is not a hintfs mount (no .hintfs directory)" % self.mount)
        self._fd = os.open(os.path.join(self._dir, "control"), os.O_WRONLY)
        if dataset is not None:
            self.dataset(dataset)

    def close(self):
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def send(self, *lines):
        """Writes raw protocol lines in one write."""
        data = "".join(line.rstrip("\n") + "\n" for line in lines).encode("utf-8")
        try:
            os.write(self._fd, data)
        except OSError as e:
            if e.errno == errno.EINVAL:
                raise HintError(self.errors().strip().splitlines()[-1]) from None
            raise

    def dataset(self, path):
        """The ImageFolder root (relative to the mount, or an absolute path inside it)."""
        if os.path.isabs(path):
            path = os.path.relpath(path, self.mount)
        self.send("dataset " + path)

    def losses(self, indices, losses):
        """One minibatch of per-sample losses (ImageFolder indices, floats)."""
        self.send("loss " + " ".join("#%d=%r" % (int(i), float(l)) for i, l in zip(indices, losses)))

    def importance(self, scores):
        """Direct importance scores: {index: score}."""
        self.send("importance " + " ".join("#%d=%r" % (int(i), float(s)) for i, s in scores.items()))

    def epoch(self, e):
        self.send("epoch %d" % e)

    def similar(self, index, neighbours):
        self.send("similar #%d " % index + " ".join("#%d" % n for n in neighbours))

    def substitution(self, on=True, max_fraction=None):
        self.send("substitution " + ("on" if on else "off")
                  + ("" if max_fraction is None else " max %r" % float(max_fraction)))

    def policy(self, name):
        self.send("policy " + name)

    def trace(self, on=True):
        self.send("trace " + ("on" if on else "off"))

    def cached(self):
        """The ImageFolder indices the mount holds locally now."""
        with open(os.path.join(self._dir, "cached")) as f:
            return [int(line[1:]) for line in f if line.startswith("#")]

    def stats(self):
        with open(os.path.join(self._dir, "stats")) as f:
            return json.load(f)

    def errors(self):
        with open(os.path.join(self._dir, "errors")) as f:
            return f.read()


class HintSampler:
    """A random sampler that remembers each epoch's order, so a training loop can name the
    samples of batch b without touching the dataset. With prefer_cached=True it is PADS-like:
    the samples the mount holds now come first (in random order), then the rest.

    Works as a torch.utils.data.Sampler (an iterable with __len__); keep DataLoader's default
    in-order delivery so batch b is order[b*batch_size:(b+1)*batch_size].
    """

    def __init__(self, hints, num_samples, prefer_cached=False, seed=0):
        self.hints = hints
        self.n = num_samples
        self.prefer_cached = prefer_cached
        self.rng = random.Random(seed)
        self.order = []

    def __len__(self):
        return self.n

    def __iter__(self):
        order = list(range(self.n))
        self.rng.shuffle(order)
        if self.prefer_cached:
            held = set(self.hints.cached())
            order = [i for i in order if i in held] + [i for i in order if i not in held]
        self.order = order
        return iter(order)

    def batch(self, b, batch_size):
        """The indices of batch b of the current epoch."""
        return self.order[b * batch_size:(b + 1) * batch_size]
