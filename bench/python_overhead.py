#!/usr/bin/env python3
"""Host time per call from Python: how long tessera.gemm, torch.ops.tessera.gemm,
torch.matmul (cuBLAS), tessera.grouped_mm and torch._grouped_mm take to return,
per call, on small decode-shaped problems, their GPU work queued
asynchronously: a round's calls are few enough that the launch queue (about a
thousand kernels) never fills and stalls the host.
Beside the C library's own host time (`tessera bench gemm` reports it as
host_us), this is what Python adds; with tessera._fastcall, the row
"tess_gemm_fused alone" times the same prepared call's C function with its
descriptor found once, in the same rounds: tessera.gemm's "out= plan=" row
minus it is Python's share.

    python3 bench/python_overhead.py [--m 1 --n 4096 --k 4096] [--calls 500] [--csv FILE]
"""
import argparse
import csv
import statistics
import sys
import time


def per_call_us(fn, calls):
    """Host microseconds one call of fn takes, over `calls` back-to-back calls (the GPU drained first
    and after)."""
    import torch
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(calls):
        fn()
    us = (time.perf_counter() - t0) / calls * 1e6
    torch.cuda.synchronize()
    return us


def _library_call_alone(tessera, x, wt, out, plan):
    """("tess_gemm_fused alone", fn): the prepared call of tessera.gemm(x, wt, out, plan=plan) as
    tessera._fastcall launches it, its key, descriptor and addresses found once, so that only the
    tensors' pointers and the C library's own work are timed; None without the module."""
    import ctypes
    from tessera import call_cache, fastcall
    gemm_module = sys.modules["tessera.gemm"]
    fast = fastcall.module()
    key = gemm_module._call_key(x, wt, out, None, 1.0, 0.0, None, None, None, None, None, None, (False, False),
                                None, None, "columns", None, (None, 0.0))
    p = call_cache.find(key)
    if fast is None or p is None:
        return None
    fn, handle, desc = fastcall.address("tess_gemm_fused"), p.handle._h.value, p.desc_address
    raw_plan = ctypes.addressof(plan.raw)
    if fast.gemm(fn, handle, desc, raw_plan, x, None, wt, None, None, out, None, None) != 0:
        return None
    return ("tess_gemm_fused alone", lambda: fast.gemm(fn, handle, desc, raw_plan, x, None, wt, None, None, out,
                                                       None, None))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--m", type=int, default=1)
    ap.add_argument("--n", type=int, default=4096)
    ap.add_argument("--k", type=int, default=4096)
    ap.add_argument("--groups", type=int, default=8, help="experts of the grouped GEMM timed (m tokens each)")
    ap.add_argument("--calls", type=int, default=500, help="calls per round (under the launch queue's depth)")
    ap.add_argument("--rounds", type=int, default=9, help="rounds over all the cases in turn (median reported)")
    ap.add_argument("--csv", help="also write the rows here")
    args = ap.parse_args()
    import torch

    import tessera
    if not torch.cuda.is_available():
        sys.exit("python_overhead.py: needs a CUDA device")
    x = torch.randn(args.m, args.k, dtype=torch.bfloat16, device="cuda")
    w = torch.randn(args.n, args.k, dtype=torch.bfloat16, device="cuda")
    out = torch.empty(args.m, args.n, dtype=torch.bfloat16, device="cuda")
    plan = tessera.gemm_plans(x, w.T)[0]
    # A decode MoE step's grouped GEMM: args.groups experts, m tokens each.
    g = args.groups
    gx = torch.randn(g * args.m, args.k, dtype=torch.bfloat16, device="cuda")
    gw = torch.randn(g, args.n, args.k, dtype=torch.bfloat16, device="cuda")
    offs = torch.arange(1, g + 1, dtype=torch.int32, device="cuda") * args.m
    wt = w.T  # made once: the calls timed are the libraries', not the view's
    cases = [
        ("tessera.gemm", lambda: tessera.gemm(x, wt)),
        ("tessera.gemm out= plan=", lambda: tessera.gemm(x, wt, out, plan=plan)),
        ("torch.ops.tessera.gemm", lambda: torch.ops.tessera.gemm(x, wt)),
        ("torch.matmul (cuBLAS)", lambda: torch.matmul(x, wt)),
        ("torch.matmul out= (cuBLAS)", lambda: torch.matmul(x, wt, out=out)),
        (f"tessera.grouped_mm G={g}", lambda: tessera.grouped_mm(gx, gw, offs)),
    ]
    if hasattr(torch, "_grouped_mm"):
        gwt = gw.transpose(-2, -1)
        cases.append((f"torch._grouped_mm G={g}", lambda: torch._grouped_mm(gx, gwt, offs=offs)))
    for _, fn in cases:  # warm-up: handles, plans, allocator
        for _ in range(20):
            fn()
    c_alone = _library_call_alone(tessera, x, wt, out, plan)
    if c_alone is not None:  # the same prepared call's tess_gemm_fused alone: what is left is Python's
        cases.insert(2, c_alone)
        for _ in range(20):
            c_alone[1]()
    # Rounds go over every case in turn, so that a noisy stretch of the host hits them alike.
    times = {name: [] for name, _ in cases}
    for _ in range(args.rounds):
        for name, fn in cases:
            times[name].append(per_call_us(fn, args.calls))
    rows = []
    for name, _ in cases:
        us, best = statistics.median(times[name]), min(times[name])
        rows.append({"call": name, "m": args.m, "n": args.n, "k": args.k, "host_us_per_call": f"{us:.2f}",
                     "best_round_us": f"{best:.2f}"})
        print(f"{name:28s} {us:7.2f} us per call (median of {args.rounds} rounds; best {best:.2f})")
    if args.csv:
        with open(args.csv, "w", newline="") as f:
            from tessera import fastcall
            f.write(f"# device={torch.cuda.get_device_name()} torch={torch.__version__} "
                    f"tessera={tessera.version_string()} "
                    f"fastcall={'on' if fastcall.module() is not None else 'off (TESSERA_FASTCALL=0 or not built)'}\n")
            writer = csv.DictWriter(f, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows(rows)


if __name__ == "__main__":
    main()
