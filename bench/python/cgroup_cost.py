"""What the supervisor's per-child cgroup work costs on this machine, beside a plain spawn:
one leaf made in the v2 hierarchy and (on a hybrid host) in the v1 ``pids`` one, the child
moved into both through ``cgroup.procs``, both removed after it exits. Every bash call does
exactly this, so it is the floor of the bash tool's overhead over ``subprocess.run``.

Usage: python bench/python/cgroup_cost.py [runs]   (needs write access to the cgroup mounts,
as execkit's cgroup containment does). Prints the median and p90 of each step in ms.
"""

import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOTS = [Path("/sys/fs/cgroup/unified"), Path("/sys/fs/cgroup/pids"), Path("/sys/fs/cgroup")]


def hierarchies():
    """The v2 hierarchy and the v1 pids one, whichever this host mounts."""
    found = [r for r in ROOTS[:2] if (r / "cgroup.procs").exists()]
    return found or [ROOTS[2]]


def timed(samples, name, action):
    started = time.perf_counter()
    action()
    samples.setdefault(name, []).append(time.perf_counter() - started)


def one_round(bases, i, samples):
    leaves = [base / f"c{i}" for base in bases]
    timed(samples, "mkdir leaves", lambda: [leaf.mkdir() for leaf in leaves])
    child = subprocess.Popen(["sleep", "5"])
    for leaf in leaves:
        timed(samples, f"join {leaf.parent.parent.name}",
              lambda leaf=leaf: (leaf / "cgroup.procs").write_text(str(child.pid)))
    child.kill()
    child.wait()
    timed(samples, "rmdir leaves", lambda: [leaf.rmdir() for leaf in leaves])
    timed(samples, "spawn+wait bash -c true", lambda: subprocess.run(["bash", "-c", "true"], check=True))


def main():
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    bases = [root / f"execkit-cost-{os.getpid()}" for root in hierarchies()]
    for base in bases:
        base.mkdir()
    samples = {}
    try:
        for i in range(runs):
            one_round(bases, i, samples)
    finally:
        for base in bases:
            base.rmdir()
    for name, values in samples.items():
        values.sort()
        print(f"{name:26s} median {statistics.median(values) * 1e3:.3f} ms  "
              f"p90 {values[int(len(values) * 0.9)] * 1e3:.3f} ms")


if __name__ == "__main__":
    main()
