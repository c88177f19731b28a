"""The Python package against its baselines, measured in the same run (issue targets:
``tk.call("bash", {"command": "true"})`` within 1.3x of ``subprocess.run(["bash", "-c",
"true"])``; a warm eval round trip through the module within 1/20 of ipykernel's).

Usage: python bench/python/bench.py [runs]   (with the execkit wheel installed; the eval
comparison also needs jupyter_client and ipykernel). Prints one JSON line per measurement and
the ratios.
"""

import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import execkit

WARMUP = 50


def median_us(values):
    values = sorted(values)
    return values[len(values) // 2] * 1e6


def report(name, values):
    line = {"bench": name, "runs": len(values), "median_us": round(median_us(values), 1),
            "p90_us": round(sorted(values)[int(len(values) * 0.9)] * 1e6, 1)}
    print(json.dumps(line), flush=True)
    return line["median_us"]


def check(result):
    if result["isError"]:
        raise RuntimeError(f"the measured call failed: {result}")


def timed(action):
    started = time.perf_counter()
    action()
    return time.perf_counter() - started


def interleaved(runs, first, second):
    """Alternates the two actions so load on the machine hits both alike."""
    for _ in range(WARMUP):
        first()
        second()
    a, b = [], []
    for _ in range(runs):
        a.append(timed(first))
        b.append(timed(second))
    return a, b


def bash_overhead(tk, runs):
    def execkit_bash():
        check(tk.call("bash", {"command": "true"}))

    def subprocess_bash():
        subprocess.run(["bash", "-c", "true"], check=True)  # noqa: S603, S607 - the baseline

    ours, baseline = interleaved(runs, execkit_bash, subprocess_bash)
    ratio = report("execkit_py_bash_true", ours) / report("subprocess_run_bash_true", baseline)
    print(f"bash per call: {ratio:.2f}x subprocess.run (target <= 1.3x)")


def eval_round_trip(tk, runs):
    cell = {"cells": [{"language": "py", "code": "1+1"}]}

    def execkit_eval():
        check(tk.call("eval", cell))

    for _ in range(WARMUP):
        execkit_eval()
    ours = report("execkit_py_eval_warm_round_trip", [timed(execkit_eval) for _ in range(runs)])
    try:
        sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "eval"))
        import jupyter_baseline
    except ImportError as missing:
        print(f"ipykernel comparison skipped: {missing}")
        return
    km, client = jupyter_baseline.start(sys.executable)
    try:
        for _ in range(WARMUP):
            jupyter_baseline.run_once(client)
        theirs = [timed(lambda: jupyter_baseline.run_once(client)) for _ in range(runs)]
    finally:
        client.stop_channels()
        km.shutdown_kernel(now=True)
    ratio = report("ipykernel_warm_round_trip", theirs) / ours
    print(f"eval warm round trip: {ratio:.0f}x faster than ipykernel (target >= 20x)")


def main():
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
    with tempfile.TemporaryDirectory() as work, execkit.Toolkit(work) as tk:
        bash_overhead(tk, runs)
        eval_round_trip(tk, runs)


if __name__ == "__main__":
    main()
