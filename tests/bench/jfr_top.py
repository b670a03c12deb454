"""Top frames of a JFR recording's execution samples (jfr print --json; the text views of JDK
17's and 25's jfr tools crash on some generated method descriptors).

Usage: jfr print --json --events jdk.ExecutionSample --stack-depth 64 rec.jfr |
       /usr/bin/python3 tests/bench/jfr_top.py [N] [SINCE]
SINCE: only samples after this ISO time (the measured pass, not the mount's start). Prints the
threads sampled, the N hottest leaf frames (self time) and the N hottest hintfs frames on the
stack (inclusive), each with its share of the samples.
"""
import collections
import json
import sys


def name(frame):
    m = frame["method"]
    return "%s.%s" % (m["type"]["name"].replace("/", ".").split(".")[-1], m["name"])


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 15
    since = sys.argv[2] if len(sys.argv) > 2 else ""
    events = json.load(sys.stdin)["recording"]["events"]
    events = [e for e in events if e["values"]["startTime"] >= since]
    threads, leaf, ours = collections.Counter(), collections.Counter(), collections.Counter()
    for e in events:
        v = e["values"]
        t = (v["sampledThread"] or {}).get("javaName") or "?"
        threads[t.rstrip("0123456789-")] += 1
        frames = (v["stackTrace"] or {}).get("frames") or []
        if frames:
            leaf[name(frames[0])] += 1
        seen = set()
        for f in frames:
            if f["method"]["type"]["name"].startswith("org/hintfs"):
                k = name(f)
                if k not in seen:
                    seen.add(k)
                    ours[k] += 1
    total = max(1, len(events))
    print("%d samples; threads: %s" % (len(events), ", ".join(
        "%s %d" % kv for kv in threads.most_common(6))))
    print("| self (leaf frame) | share |")
    print("| --- | --- |")
    for k, c in leaf.most_common(n):
        print("| %s | %.1f%% |" % (k, 100.0 * c / total))
    print("| hintfs frame on the stack (inclusive) | share |")
    print("| --- | --- |")
    for k, c in ours.most_common(n):
        print("| %s | %.1f%% |" % (k, 100.0 * c / total))


if __name__ == "__main__":
    main()
