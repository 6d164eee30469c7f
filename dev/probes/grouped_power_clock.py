#!/usr/bin/env python3
"""Probe (issue 6, 2026-11-25, session 20): power and SM clock while the
large bf16 grouped GEMMs run, tessera's and torch._grouped_mm's, read with
nvidia-smi every 100 ms (nothing is set: clocks and power limit as found).
Each provider runs alone for about --seconds s on one case of the moe suite;
printed per provider: TFLOP/s over the whole run (CUDA events), the median
power and SM clock of the samples taken above half the power limit, and
TFLOP/s per GHz of that clock (how much of the tensor cores' per-clock rate
a kernel reaches, whatever the power cap leaves of the clock).
    PYTHONPATH=python TESSERA_LIBRARY=build/lib/libtessera.so \\
        python3 dev/probes/grouped_power_clock.py --case "4096 7168 8 4096 uniform"
"""
import argparse
import os
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench"))  # grouped.py
import torch  # noqa: E402

import tessera  # noqa: E402
from grouped import group_sizes  # noqa: E402


def sampled(fn, seconds, flops, limit_w):
    """Runs fn() back to back for about `seconds` while nvidia-smi samples; returns (TFLOP/s, W, MHz)."""
    for _ in range(5):
        fn()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    fn()
    torch.cuda.synchronize()
    calls = max(1, int(seconds / max(time.perf_counter() - t0, 1e-6)))
    smi = subprocess.Popen(["nvidia-smi", "--query-gpu=power.draw,clocks.sm", "--format=csv,noheader,nounits",
                            "-lms", "100"], stdout=subprocess.PIPE, text=True)
    time.sleep(0.3)
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(calls):
        fn()
    end.record()
    end.synchronize()
    smi.terminate()
    rows = [line.split(",") for line in smi.communicate()[0].splitlines() if line.count(",") == 1]
    busy = [(float(w), float(mhz)) for w, mhz in rows if float(w) > limit_w / 2]
    tflops = flops * calls / (start.elapsed_time(end) * 1e-3) / 1e12
    if not busy:
        return tflops, 0.0, 0.0
    return tflops, statistics.median(b[0] for b in busy), statistics.median(b[1] for b in busy)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--case", default="4096 7168 8 4096 uniform", help="N K G tokens split (a moe suite line)")
    ap.add_argument("--seconds", type=float, default=6.0)
    args = ap.parse_args()
    n, k, g, t, split = [int(v) if v.isdigit() else v for v in args.case.split()]
    sizes = group_sizes(g, t, split, 0)
    offs = torch.tensor(sizes, device="cuda", dtype=torch.int32).cumsum(0, dtype=torch.int32)
    total = sum(sizes)
    x = torch.randn(total, k, device="cuda", dtype=torch.bfloat16)
    w = torch.randn(g, n, k, device="cuda", dtype=torch.bfloat16)
    out = torch.empty(total, n, device="cuda", dtype=torch.bfloat16)
    wt = w.transpose(-2, -1)
    plan = tessera.grouped_plans(x, w)[0]
    limit = float(subprocess.check_output(["nvidia-smi", "--query-gpu=power.limit",
                                           "--format=csv,noheader,nounits"], text=True).split()[0])
    flops = 2.0 * total * n * k
    print(f"{torch.cuda.get_device_name()}, power limit {limit:.0f} W; case {args.case}; tessera plan {plan.name}")
    print(f"{'provider':10} {'TFLOP/s':>8} {'W':>5} {'MHz':>6} {'TFLOP/s/GHz':>12}")
    for name, fn in (("tessera", lambda: tessera.grouped_mm(x, w, offs, out, plan=plan)),
                     ("torch", lambda: torch._grouped_mm(x, wt, offs=offs)),
                     ("tessera", lambda: tessera.grouped_mm(x, w, offs, out, plan=plan))):
        tf, watts, mhz = sampled(fn, args.seconds, flops, limit)
        print(f"{name:10} {tf:8.1f} {watts:5.0f} {mhz:6.0f} {tf / (mhz / 1000) if mhz else 0:12.1f}")


if __name__ == "__main__":
    main()
