"""Hints for a hintfs mount, from a PyTorch training loop. Standard library only.

DDP (one process per rank, e.g. torchrun; each rank's DataLoader workers read the mount):

    from hintfs_hints import Hints
    hints = Hints("/mnt/imagenet", dataset="train")       # the ImageFolder root, inside the mount
    ds = torchvision.datasets.ImageFolder("/mnt/imagenet/train", transform=tf)   # unchanged
    sampler = hints.follow(DistributedSampler(ds))        # sends seed/epoch/world/rank each epoch
    loader = DataLoader(ds, batch_size=64, sampler=sampler, num_workers=4)        # unchanged
    for epoch in range(epochs):
        sampler.set_epoch(epoch)
        for b, (x, y) in enumerate(loader):
            losses = F.cross_entropy(model(x), y, reduction="none")
            hints.losses(sampler.batch(b, 64), losses.tolist())
            ...

Each rank's hints steer that rank's stream only: the mount attributes every open to the rank
whose process (or DataLoader worker) made it. Any other sampler: `hints.follow(sampler)` sends
each epoch's order as an `order` hint when the loader starts the epoch; `HintSampler` does too.

Each call is one write to MOUNT/.hintfs/control. A line the mount rejects raises HintError
with the mount's reason (also kept in MOUNT/.hintfs/errors); the other lines of the write are
applied. losses() and importance(), called inside the training loop, never raise: a NaN or
infinite value is left out and a refused line counted (dropped_values, failed_hints), warned once.
"""
from __future__ import annotations

import errno
import json
import math
import os
import random
import warnings
from typing import Any, Dict, Iterable, Iterator, List, Mapping, Optional

__all__ = ["Hints", "HintError", "HintSampler", "FollowedSampler"]

# The mount refuses longer lines (1 MiB); an order is sent in pieces well below that.
_ORDER_CHUNK = 50_000


class HintError(ValueError):
    """The mount rejected a hint line."""


class Hints:
    """Writes hint lines to a hintfs mount's control file."""

    def __init__(self, mount: str, dataset: Optional[str] = None, job: Optional[str] = None,
                 rank: Optional[int] = None) -> None:
        """job/rank: name the stream explicitly (every line is sent as 'job <job> [rank <r>] ...'),
        for a writer that is not the readers' ancestor (a sidecar process). Leave them out when the
        training process itself writes: the mount then finds its DataLoader workers by ancestry."""
        self.mount = os.path.abspath(mount)
        self._prefix = ""
        if job is not None:
            self._prefix = "job %s " % job + ("" if rank is None else "rank %d " % int(rank))
        self._dir = os.path.join(self.mount, ".hintfs")
        if not os.path.isdir(self._dir):
            raise HintError("%s is not a hintfs mount (no .hintfs directory)" % self.mount)
        self._fd = os.open(os.path.join(self._dir, "control"), os.O_WRONLY)
        if dataset is not None:
            self.dataset(dataset)

    def close(self) -> None:
        """Closes the control file (also on leaving a ``with`` block)."""
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def __enter__(self) -> "Hints":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def send(self, *lines: str) -> None:
        """Writes raw protocol lines in one write. Raises HintError with the mount's reason if it
        rejects one (every other line of the write is applied)."""
        data = "".join(self._prefix + line.rstrip("\n") + "\n" for line in lines).encode("utf-8")
        try:
            os.write(self._fd, data)
        except OSError as e:
            if e.errno == errno.EINVAL:
                raise HintError(self.errors().strip().splitlines()[-1]) from None
            if e.errno == errno.EINPROGRESS:
                # Every line was accepted; a reader line was not applied within the mount's bound
                # (2 s). It is applied in order: training goes on, the mount catches up.
                self.still_applying += 1
                self._warn_once("applying", "hintfs: the mount accepted a hint but had not applied"
                                " it within its bound; it is applied in order (stats"
                                " hints.pending), counted in Hints.still_applying")
                return
            raise

    def dataset(self, path: str) -> None:
        """The ImageFolder root (relative to the mount, or an absolute path inside it)."""
        if os.path.isabs(path):
            path = os.path.relpath(path, self.mount)
        self.send("dataset " + path)

    def losses(self, indices: Iterable[int], losses: Iterable[float]) -> None:
        """One minibatch of per-sample losses (ImageFolder indices, floats). Never raises out of
        a training loop: a NaN or infinite loss is left out (counted in ``dropped_values``), and a
        write the mount refuses or cannot take is counted in ``failed_hints``; each warns once."""
        self._scores("loss", zip(indices, losses))

    def importance(self, scores: Mapping[int, float]) -> None:
        """Direct importance scores: {index: score}. Never raises, as losses() does not."""
        self._scores("importance", scores.items())

    still_applying = 0
    """Writes the mount accepted but answered EINPROGRESS: not applied within its bound yet."""
    dropped_values = 0
    """NaN or infinite losses and scores left out of the hints sent."""
    failed_hints = 0
    """loss and importance lines the mount refused or that could not be written."""

    def _scores(self, verb: str, pairs: Iterable[Any]) -> None:
        parts = []
        for i, v in pairs:
            v = float(v)
            if math.isfinite(v):
                parts.append("#%d=%r" % (int(i), v))
            else:
                self.dropped_values += 1
                self._warn_once("dropped", "hintfs: left out a non-finite %s (%r for sample %d);"
                                " counted in Hints.dropped_values" % (verb, v, int(i)))
        if not parts:
            return
        try:
            self.send(verb + " " + " ".join(parts))
        except (HintError, OSError) as e:
            self.failed_hints += 1
            self._warn_once("failed", "hintfs: a %s hint was not taken (%s); training goes on,"
                            " counted in Hints.failed_hints" % (verb, e))

    def _warn_once(self, kind: str, message: str) -> None:
        warned = self.__dict__.setdefault("_warned", set())
        if kind not in warned:
            warned.add(kind)
            warnings.warn(message, RuntimeWarning, stacklevel=3)

    def epoch(self, e: int) -> None:
        """A new epoch begins (for this writer's stream; the first rank's starts it for the
        mount: substitution's per-epoch rules and coverage)."""
        self.send("epoch %d" % e)

    def seed(self, seed: int, epoch: int = 0, world: int = 1, rank: int = 0,
             sampler: str = "distributed", drop_last: bool = False,
             persistent_workers: bool = False) -> None:
        """This rank's sampler: DistributedSampler(seed=seed, num_replicas=world, rank=rank), or
        sampler="random" for DataLoader(shuffle=True, generator=torch.Generator().manual_seed(seed))."""
        self.send("seed %d epoch %d world %d rank %d sampler %s%s%s" % (
            int(seed), int(epoch), int(world), int(rank), sampler,
            " drop_last" if drop_last else "", " persistent_workers" if persistent_workers else ""))

    def packed(self, path: str, base: int, stride: int, count: int, seed: int, epoch: int = 0,
               persistent_workers: bool = False) -> None:
        """A packed file's samples: count records of stride bytes from byte base of path (under
        the mount), read by DataLoader(shuffle=True, generator=torch.Generator().manual_seed(seed)).
        The mount then fetches them ahead in that order and keeps the pages needed soonest."""
        self.send("packed %s %d %d %d seed %d epoch %d%s" % (
            self._in_mount(path), int(base), int(stride), int(count), int(seed), int(epoch),
            " persistent_workers" if persistent_workers else ""))

    def packed_h5(self, path: str, name: str, seed: int, epoch: int = 0,
                  persistent_workers: bool = False) -> None:
        """packed() for HDF5 dataset `name` of file `path`, one sample per row: its place and row
        size from h5py. The dataset must be contiguous (no chunks= when it was written)."""
        import h5py  # only for this call
        with h5py.File(path, "r") as f:
            ds = f[name]
            base = ds.id.get_offset()
            if base is None or ds.chunks is not None:
                raise HintError("%s in %s is not stored contiguously: its rows have no fixed place"
                                % (name, path))
            row = ds.dtype.itemsize
            for d in ds.shape[1:]:
                row *= int(d)
            count = int(ds.shape[0])
        self.packed(path, base, row, count, seed, epoch, persistent_workers)

    def _in_mount(self, path: str) -> str:
        """A path relative to the mount's root (as control lines name files)."""
        full = os.path.abspath(path)
        if not full.startswith(self.mount + os.sep):
            if os.path.isabs(path):
                raise HintError("%s is not under the mount %s" % (path, self.mount))
            return path
        rel = full[len(self.mount) + 1:]
        if any(c.isspace() for c in rel):
            raise HintError("packed names a file by a path without spaces: %r" % rel)
        return rel

    def order(self, indices: Iterable[int]) -> None:
        """This rank's upcoming reads, as ImageFolder indices (sent in pieces on long orders)."""
        indices = list(indices)
        verb = "order"
        for k in range(0, max(len(indices), 1), _ORDER_CHUNK):
            piece = indices[k:k + _ORDER_CHUNK]
            if piece:
                self.send(verb + " " + " ".join("#%d" % int(i) for i in piece))
            verb = "order+"

    def follow(self, sampler: Any) -> "FollowedSampler":
        """Wraps a sampler so the mount learns each epoch's order as the loader starts it: a
        DistributedSampler (shuffling) sends its seed, epoch, world and rank; any other sampler
        sends the order it yields. Use the result as the DataLoader's sampler."""
        return FollowedSampler(self, sampler)

    def similar(self, index: int, neighbours: Iterable[int]) -> None:
        """Neighbours preferred as stand-ins when ``index`` is missed (SpiderCache)."""
        self.send("similar #%d " % index + " ".join("#%d" % n for n in neighbours))

    def substitution(self, on: bool = True, max_fraction: Optional[float] = None,
                     reuse: bool = False, from_start: bool = False) -> None:
        """Serve a cached sample of the same class for a missed one (opt-in).

        Defaults protect training: at most 20% of an epoch's reads, each stand-in once per epoch,
        none before the first epoch ends or for a sample with no loss yet, and a sample
        substituted away in one epoch is read in the next. ``reuse`` lets a stand-in serve again
        in the same epoch; ``from_start`` substitutes from the first read.
        """
        if not on:
            self.send("substitution off")
            return
        self.send("substitution on"
                  + ("" if max_fraction is None else " max %r" % float(max_fraction))
                  + (" reuse" if reuse else "") + (" from-start" if from_start else ""))

    def policy(self, name: str) -> None:
        """The cache policy: auto, lru, lfu, static, shade, impact or clairvoyant."""
        self.send("policy " + name)

    def trace(self, on: bool = True) -> None:
        """Starts or stops recording the trace (the file given by the mount's --trace)."""
        self.send("trace " + ("on" if on else "off"))

    def cached(self) -> List[int]:
        """The ImageFolder indices the mount holds locally now."""
        with open(os.path.join(self._dir, "cached")) as f:
            return [int(line[1:]) for line in f if line.startswith("#")]

    def stats(self) -> Dict[str, Any]:
        """The mount's statistics (MOUNT/.hintfs/stats, the JSON `hintfs status --json` shows)."""
        with open(os.path.join(self._dir, "stats")) as f:
            return json.load(f)

    def errors(self) -> str:
        """The last lines the mount rejected, with its reasons."""
        with open(os.path.join(self._dir, "errors")) as f:
            return f.read()


class HintSampler:
    """A random sampler that remembers each epoch's order, so a training loop can name the
    samples of batch b without touching the dataset. With prefer_cached=True it is PADS-like:
    the samples the mount holds now come first (in random order), then the rest.

    Works as a torch.utils.data.Sampler (an iterable with __len__); keep DataLoader's default
    in-order delivery so batch b is order[b*batch_size:(b+1)*batch_size]. Each epoch's order is
    sent to the mount as an `order` hint when iterated (send_order=False: not).
    """

    def __init__(self, hints: Hints, num_samples: int, prefer_cached: bool = False, seed: int = 0,
                 send_order: bool = True) -> None:
        self.send_order = send_order
        self.hints = hints
        self.n = num_samples
        self.prefer_cached = prefer_cached
        self.rng = random.Random(seed)
        self.order: List[int] = []

    def __len__(self) -> int:
        return self.n

    def __iter__(self) -> Iterator[int]:
        order = list(range(self.n))
        self.rng.shuffle(order)
        if self.prefer_cached:
            held = set(self.hints.cached())
            order = [i for i in order if i in held] + [i for i in order if i not in held]
        self.order = order
        if self.send_order:
            self.hints.order(order)  # the mount prefetches it and evicts by next use
        return iter(order)

    def batch(self, b: int, batch_size: int) -> List[int]:
        """The indices of batch b of the current epoch."""
        return self.order[b * batch_size:(b + 1) * batch_size]


class FollowedSampler:
    """A sampler that tells the mount what it will read (see Hints.follow). It remembers the
    epoch's order, so batch(b, batch_size) names the ImageFolder indices of batch b (with the
    DataLoader's default in-order delivery)."""

    def __init__(self, hints: Hints, sampler: Any) -> None:
        self.hints = hints
        self.sampler = sampler
        self.order: List[int] = []

    def __len__(self) -> int:
        return len(self.sampler)

    def set_epoch(self, epoch: int) -> None:
        """Forwards to the wrapped sampler (DistributedSampler.set_epoch)."""
        if hasattr(self.sampler, "set_epoch"):
            self.sampler.set_epoch(epoch)

    def _is_distributed(self) -> bool:
        s = self.sampler
        return all(hasattr(s, a) for a in ("seed", "epoch", "num_replicas", "rank", "shuffle",
                                           "drop_last")) and s.shuffle

    def __iter__(self) -> Iterator[int]:
        self.order = list(iter(self.sampler))
        s = self.sampler
        if self._is_distributed():
            self.hints.seed(s.seed, epoch=s.epoch, world=s.num_replicas, rank=s.rank,
                            drop_last=s.drop_last)
        else:
            self.hints.order(self.order)
        return iter(self.order)

    def batch(self, b: int, batch_size: int) -> List[int]:
        """The indices of batch b of the current epoch."""
        return self.order[b * batch_size:(b + 1) * batch_size]
