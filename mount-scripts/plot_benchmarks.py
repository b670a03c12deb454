"""Turns benchmark outputs into the PNGs under docs/img/ (Debian's python3-matplotlib).

Usage: /usr/bin/python3 mount-scripts/plot_benchmarks.py [OUT_DIR]   (default docs/img)

- policy-hit-ratio.png: hit ratio by policy and cache size on the recorded importance-sampling
  trace (tests/traces/digits-importance.trace), replayed now by `hintfs simulate` (needs the jar).
- node-bench.png: images/s per epoch in the node benchmark, hintfs with and without hints, s3fs
  and rclone, read from the headline table in BENCHMARKS.md (tests/bench/node-bench.sh).
- substitution.png: test accuracy and reads served locally against the substitution cap, from the
  substitution benchmark's table in BENCHMARKS.md (tests/bench/substitution-bench.sh).
"""
import os
import re
import subprocess
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
POLICIES = ["lru", "lfu", "static", "shade", "impact", "clairvoyant"]
SIZES = [5, 10, 20, 30, 50]


def markdown_table(text, heading):
    """The rows (lists of cells) of the first table after the line starting with heading."""
    lines = text[text.index(heading):].splitlines()
    rows, started = [], False
    for line in lines[1:]:
        if line.startswith("|"):
            started = True
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if not set(cells[0]) <= set("- "):
                rows.append(cells)
        elif started:
            break
    return rows[0], rows[1:]


def policy_plot(out):
    cmd = [os.path.join(ROOT, "mount-scripts", "hintfs"), "simulate", "--trace",
           os.path.join(ROOT, "tests", "traces", "digits-importance.trace"),
           "--policies", ",".join(POLICIES), "--sizes", ",".join(map(str, SIZES))]
    text = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    ratio = {}
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) > 3 and cells[1].endswith("%"):
            ratio[(cells[2], float(cells[1][:-1]))] = float(cells[3])
    fig, ax = plt.subplots(figsize=(7, 4))
    for p in POLICIES:
        ax.plot(SIZES, [ratio[(p, s)] for s in SIZES], marker="o", label=p)
    ax.set_xlabel("cache size (% of the dataset)")
    ax.set_ylabel("hit ratio")
    ax.set_title("Recorded importance-sampling trace (1,797 digits, 8 epochs)")
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(os.path.join(out, "policy-hit-ratio.png"), dpi=110)


def node_plot(out, bench):
    head, rows = markdown_table(bench, "## One node, several ranks")
    worlds = sorted({int(r[1]) for r in rows})
    fig, axes = plt.subplots(1, len(worlds), figsize=(4 * len(worlds), 4), sharey=True)
    for ax, w in zip(axes, worlds):
        mine = [r for r in rows if int(r[1]) == w and r[0].startswith("S3")]
        for k, r in enumerate(mine):
            label = r[0].replace("S3 10 ms: ", "")
            ax.plot([0, 1, 2], [float(x) for x in r[2:5]], marker="o", label=label)
        ax.set_title("world %d, S3 with 10 ms per request" % w)
        ax.set_xlabel("epoch")
        ax.set_xticks([0, 1, 2])
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("node images/s")
    axes[-1].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(os.path.join(out, "node-bench.png"), dpi=110)


def substitution_plot(out, bench):
    heading = "## Substitution's accuracy"
    if heading not in bench:
        return
    head, rows = markdown_table(bench, heading)
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(10, 4))
    for key in sorted({(r[0], r[1]) for r in rows}):
        mine = [r for r in rows if (r[0], r[1]) == key]
        caps = [0.0 if r[2] == "off" else 0.2 if r[2] == "default" else float(r[2].split()[1])
                for r in mine]
        order = sorted(range(len(mine)), key=lambda i: caps[i])
        acc = [float(re.match(r"([\d.]+)", mine[i][6]).group(1)) for i in order]
        local = [float(mine[i][4]) for i in order]
        xs = [caps[i] for i in order]
        a1.plot(xs, acc, marker="o", label="%s, cache %s" % key)
        a2.plot(xs, local, marker="o", label="%s, cache %s" % key)
    a1.set_xlabel("substitution cap (0 = off; default 0.2)")
    a1.set_ylabel("test accuracy (mean of 3 seeds)")
    a2.set_xlabel("substitution cap (0 = off; default 0.2)")
    a2.set_ylabel("reads served locally")
    for a in (a1, a2):
        a.grid(alpha=0.3)
        a.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(os.path.join(out, "substitution.png"), dpi=110)


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "docs", "img")
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(ROOT, "BENCHMARKS.md")) as f:
        bench = f.read()
    policy_plot(out)
    node_plot(out, bench)
    substitution_plot(out, bench)
    print("plots in %s" % out)


if __name__ == "__main__":
    main()
