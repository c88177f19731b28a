"""BM1/BM2 baselines: ipykernel on the same interpreter, driven by jupyter_client.

BM1: execute("1+1") until both the shell reply and iopub ``idle`` have arrived (50 warm-up
runs, then N measured). BM2: KernelManager.start_kernel() + wait_for_ready() + first execute.
Prints JSON lines like the Rust harness. Usage: python jupyter_baseline.py [warm] [cold]
"""

import json
import sys
import time

from jupyter_client.manager import KernelManager


def stats(name, values):
    values = sorted(values)

    def q(p):
        return values[round((len(values) - 1) * p)] * 1e6

    print(json.dumps({"bench": name, "runs": len(values), "median_us": q(0.5),
                      "p90_us": q(0.9), "p99_us": q(0.99)}))


def run_once(client):
    msg_id = client.execute("1+1")
    got_reply = got_idle = False
    while not (got_reply and got_idle):
        if not got_reply:
            reply = client.get_shell_msg(timeout=10)
            got_reply = reply["parent_header"].get("msg_id") == msg_id
        if not got_idle:
            msg = client.get_iopub_msg(timeout=10)
            got_idle = (msg["parent_header"].get("msg_id") == msg_id
                        and msg["msg_type"] == "status"
                        and msg["content"]["execution_state"] == "idle")


def start(python):
    km = KernelManager(kernel_cmd=None)
    km.kernel_spec.argv[0] = python
    km.start_kernel()
    client = km.client()
    client.start_channels()
    client.wait_for_ready(timeout=60)
    return km, client


def main():
    warm_runs = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
    cold_runs = int(sys.argv[2]) if len(sys.argv) > 2 else 10
    python = sys.executable
    cold = []
    for _ in range(cold_runs):
        t = time.perf_counter()
        km, client = start(python)
        run_once(client)
        cold.append(time.perf_counter() - t)
        client.stop_channels()
        km.shutdown_kernel(now=True)
    if cold:
        stats("ipykernel_cold_start_to_first_result", cold)
    km, client = start(python)
    for _ in range(50):
        run_once(client)
    warm = []
    for _ in range(warm_runs):
        t = time.perf_counter()
        run_once(client)
        warm.append(time.perf_counter() - t)
    stats("ipykernel_warm_round_trip", warm)
    client.stop_channels()
    km.shutdown_kernel(now=True)


if __name__ == "__main__":
    main()
