#!/usr/bin/python3
"""Pages out the mappings of a file in running processes (MADV_PAGEOUT through process_madvise,
Linux 5.10+): drop_caches leaves the pages a process has mapped in place, so without this a hintfs
daemon's "cold" pass finds its LMDB map still in memory. lib.sh's drop runs it for data.mdb.
Usage: pageout.py NAME [PID ...]  (root; every mapping whose path ends with /NAME, in the given
processes or in all). Prints the bytes paged out; exits 1, saying why, if one could not be."""
import ctypes, os, sys

SYS_PIDFD_OPEN, SYS_PROCESS_MADVISE, MADV_PAGEOUT = 434, 440, 21


class IoVec(ctypes.Structure):
    _fields_ = [("base", ctypes.c_void_p), ("len", ctypes.c_size_t)]


def ranges_of(pid, name):
    try:
        with open(f"/proc/{pid}/maps") as f:
            lines = f.readlines()
    except OSError:  # ended meanwhile, or a kernel thread
        return []
    out = []
    for line in lines:
        parts = line.split()
        if len(parts) >= 6 and parts[5].endswith("/" + name):
            lo, hi = (int(x, 16) for x in parts[0].split("-"))
            out.append((lo, hi))
    return out


def main():
    name = sys.argv[1]
    pids = [int(p) for p in sys.argv[2:]] or [int(p) for p in os.listdir("/proc") if p.isdigit()]
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    total, failed = 0, False
    for pid in pids:
        ranges = ranges_of(pid, name)
        if not ranges:
            continue
        pidfd = libc.syscall(SYS_PIDFD_OPEN, pid, 0)
        if pidfd < 0:
            print(f"pageout: pidfd_open({pid}): {os.strerror(ctypes.get_errno())}", file=sys.stderr)
            failed = True
            continue
        for lo, hi in ranges:
            step = 1 << 30  # process_madvise may stop short on a long range: go in pieces
            for a in range(lo, hi, step):
                v = IoVec(a, min(step, hi - a))
                n = libc.syscall(SYS_PROCESS_MADVISE, pidfd, ctypes.byref(v), 1, MADV_PAGEOUT, 0)
                if n < 0:
                    err = os.strerror(ctypes.get_errno())
                    print(f"pageout: process_madvise({pid}): {err}", file=sys.stderr)
                    failed = True
                    break
                total += n
        os.close(pidfd)
    print(total)
    return 1 if failed else 0


sys.exit(main())
