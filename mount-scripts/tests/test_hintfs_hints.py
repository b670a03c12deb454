"""The Python helper against a real hintfs mount (run with /usr/bin/python3 -m pytest).

Each test gets a fresh mount of a small generated ImageFolder (the fixture uses the repository's
launcher, mount-scripts/hintfs, so the jar must be built: mvn package). The last test installs the
helper with pip into a fresh venv, offline, as a user would from the repository.
"""
import errno
import gc
import os
import shutil
import subprocess
import sys
import time

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPTS = os.path.dirname(HERE)
sys.path.insert(0, SCRIPTS)
import hintfs_hints  # noqa: E402
from hintfs_hints import HintError, Hints  # noqa: E402

HINTFS = os.path.join(SCRIPTS, "hintfs")


@pytest.fixture(scope="module")
def dataset(tmp_path_factory):
    src = tmp_path_factory.mktemp("ds") / "src"
    subprocess.run([sys.executable, os.path.join(SCRIPTS, "make_demo_dataset.py"), str(src),
                    "--per-class", "6"], check=True, capture_output=True)
    return src


@pytest.fixture
def mount(dataset, tmp_path):
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    subprocess.run([HINTFS, "mount", str(dataset), str(mnt), "--cache-dir", str(tmp_path / "c"),
                    "--cache-size", "50%"], check=True, capture_output=True)
    try:
        yield str(mnt)
    finally:
        gc.collect()  # Hints a test did not close still hold the control file open
        r = subprocess.run([HINTFS, "unmount", str(mnt)], capture_output=True)
        if r.returncode != 0:
            subprocess.run([HINTFS, "unmount", "--lazy", str(mnt)], capture_output=True)
        assert not os.path.ismount(str(mnt)), r.stderr


@pytest.fixture
def hints(mount):
    """A Hints on the mount with the dataset declared, closed after the test."""
    with Hints(mount, dataset="train") as h:
        yield h


def test_dataset_losses_and_epoch_reach_the_mount(mount):
    with Hints(mount, dataset="train") as h:
        h.losses([0, 1, 2], [0.1, 2.0, 0.5])
        h.importance({3: 1.5})
        h.epoch(3)
        s = h.stats()
    assert s["hints"]["dataset"] == "train"
    assert s["hints"]["samples"] == 60
    assert s["hints"]["scored_samples"] >= 4
    assert s["hints"]["epoch"] == 3
    assert s["hints"]["accepted_by_kind"]["loss"] == 1


def test_a_rejected_line_raises_HintError_with_the_mounts_reason(hints):
    h = hints
    with pytest.raises(HintError, match=r"max must be in \[0, 1\], not 2.0"):
        h.substitution(max_fraction=2)
    with pytest.raises(HintError, match="unknown hint 'frobnicate'"):
        h.send("frobnicate 1")
    h.epoch(1)  # the mount took nothing bad and goes on
    assert "frobnicate" in h.errors()
    assert h.stats()["hints"]["rejected"] == 2


def test_a_nan_or_inf_loss_never_ends_training_it_is_dropped_counted_and_warned_once(hints):
    h = hints
    with pytest.warns(RuntimeWarning, match="non-finite loss") as w:
        h.losses([0, 1, 2, 3], [0.5, float("nan"), float("inf"), 1.5])
        h.losses([4, 5], [float("-inf"), 2.5])
    assert len([x for x in w if "non-finite" in str(x.message)]) == 1  # once, not per value
    assert h.dropped_values == 3
    h.importance({6: float("nan")})  # nothing finite left: nothing sent, nothing raised
    assert h.dropped_values == 4
    s = h.stats()
    assert s["hints"]["rejected"] == 0
    assert s["hints"]["accepted_by_kind"]["loss"] == 2  # both batches went, minus their bad values
    assert s["hints"]["scored_samples"] == 3  # samples 0, 3 and 5


def test_a_loss_line_the_mount_refuses_is_counted_not_raised(hints):
    h = hints
    with pytest.warns(RuntimeWarning, match="was not taken"):
        h.losses([10_000], [0.5])  # no such sample in a dataset of 60
    assert h.failed_hints == 1
    h.losses([0], [0.5])  # and the next batch goes through
    assert h.failed_hints == 1


def test_a_write_the_mount_answers_still_applying_is_counted_and_warned_not_raised(hints,
                                                                                  monkeypatch):
    # The mount answers EINPROGRESS when a reader line is accepted but not applied within 2 s;
    # stalling its applier for that long is not possible from here, so the answer is stood in for.
    def still_applying(fd, data):
        raise OSError(errno.EINPROGRESS, os.strerror(errno.EINPROGRESS))

    monkeypatch.setattr(hintfs_hints.os, "write", still_applying)
    with pytest.warns(RuntimeWarning, match="applied in order"):
        hints.epoch(1)
    hints.epoch(2)  # warned once
    assert hints.still_applying == 2


def test_not_a_mount_is_said_plainly(tmp_path):
    with pytest.raises(HintError, match="is not a hintfs mount"):
        Hints(str(tmp_path))


def test_follow_sends_a_distributed_samplers_seed_and_the_mount_predicts_it(mount, hints):
    from torch.utils.data import DistributedSampler
    from torchvision.datasets import ImageFolder
    h = hints
    ds = ImageFolder(os.path.join(mount, "train"))
    sampler = h.follow(DistributedSampler(ds, num_replicas=1, rank=0, seed=5))
    sampler.set_epoch(2)
    order = list(iter(sampler))
    assert sorted(order) == list(range(len(ds)))
    assert sampler.batch(1, 4) == order[4:8]
    p = h.stats()["prediction"]
    assert p["known"] and p["seed"] == 5 and p["length"] == len(ds)


def test_a_long_order_goes_in_pieces(hints, monkeypatch):
    monkeypatch.setattr(hintfs_hints, "_ORDER_CHUNK", 7)
    h = hints
    h.order(range(59, -1, -1))
    s = h.stats()
    assert s["hints"]["accepted_by_kind"]["order"] == 1
    assert s["hints"]["accepted_by_kind"]["order+"] == 8  # 60 = 7 + 8 * 7 + 4 ... in 9 lines
    assert s["prediction"]["length"] == 60


def test_substitution_options(hints):
    h = hints
    h.substitution(max_fraction=0.3, reuse=True)
    sub = h.stats()["substitution"]
    assert sub["on"] and sub["max"] == 0.3 and sub["reuse"] and not sub["from_start"]
    h.substitution()
    sub = h.stats()["substitution"]
    assert sub["max"] == 0.2 and not sub["reuse"]  # `substitution on` alone: the defaults
    h.substitution(False)
    assert not h.stats()["substitution"]["on"]


def test_cached_names_what_the_mount_holds(mount, hints):
    h = hints
    from torchvision.datasets import ImageFolder
    ds = ImageFolder(os.path.join(mount, "train"))
    with open(ds.samples[7][0], "rb") as f:
        f.read()
    deadline = time.time() + 10
    while 7 not in h.cached() and time.time() < deadline:
        time.sleep(0.05)
    assert 7 in h.cached()


def test_pip_installs_the_helper_into_a_fresh_venv_offline(tmp_path):
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    for f in ("pyproject.toml", "hintfs_hints.py", "README-python.md"):
        shutil.copy(os.path.join(SCRIPTS, f), pkg)
    venv = tmp_path / "venv"
    subprocess.run(["/usr/bin/python3", "-m", "venv", str(venv)], check=True)
    r = subprocess.run([str(venv / "bin" / "pip"), "install", "-q", "--no-index", "--find-links",
                        "/usr/share/python-wheels", str(pkg)], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    r = subprocess.run([str(venv / "bin" / "python"), "-c",
                        "import hintfs_hints, typing; "
                        "print(typing.get_type_hints(hintfs_hints.Hints.seed)['seed'].__name__)"],
                       capture_output=True, text=True, cwd=str(tmp_path))
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "int"
