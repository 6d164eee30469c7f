#!/usr/bin/env python3
"""Host time of one tessera.gemm call on torch tensors, and where it goes (issue 32).

For a bf16 GEMM and an FP8 block-scaled one (fp8.py's factor layouts: 1x128 for A, M-major;
128x128 for B): the wall time per call of `--calls` back-to-back prepared calls (the GPU kept busy
ahead of them by a sleep kernel, so the host is what is timed), the same for torch's matmul /
_scaled_mm, then cProfile's top entries of the FP8 calls by own time.

    PYTHONPATH=python TESSERA_LIBRARY=build/lib/libtessera.so python3 dev/probes/host_time.py
"""
import argparse
import cProfile
import pstats
import time

import torch

import tessera


def host_us(fn, calls):
    """Host microseconds per call of `calls` calls queued behind a long sleep kernel."""
    fn()
    torch.cuda.synchronize()
    torch.cuda._sleep(int(2e9))  # about a second of GPU time: the calls only queue
    t0 = time.perf_counter()
    for _ in range(calls):
        fn()
    us = (time.perf_counter() - t0) * 1e6 / calls
    torch.cuda.synchronize()
    return us


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--calls", type=int, default=200)
    ap.add_argument("--m", type=int, default=128)
    ap.add_argument("--n", type=int, default=2112)
    ap.add_argument("--k", type=int, default=7168)
    args = ap.parse_args()
    m, n, k = args.m, args.n, args.k
    a16 = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
    b16 = torch.randn(n, k, device="cuda", dtype=torch.bfloat16)
    y = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
    a8, b8 = a16.to(torch.float8_e4m3fn), b16.to(torch.float8_e4m3fn)
    kb = k // 128
    sfa = torch.rand(kb, (m + 3) // 4 * 4, device="cuda").T[:m]  # 1x128, M-major (fp8.py's mn_major)
    sfb = torch.rand((n + 127) // 128, kb, device="cuda")         # 128x128, K-major
    calls = {
        "tessera bf16": lambda: tessera.gemm(a16, b16.T, y),
        "torch bf16": lambda: torch.matmul(a16, b16.T, out=y),
        "tessera fp8 1x128 x 128x128": lambda: tessera.gemm(a8, b8.T, y, scale_a=sfa, scale_b=sfb,
                                                            scale_recipe_a="1x128", scale_recipe_b="128x128"),
        "tessera fp8 1x128 x 128x128, no out": lambda: tessera.gemm(a8, b8.T, scale_a=sfa, scale_b=sfb,
                                                                    scale_recipe_a="1x128",
                                                                    scale_recipe_b="128x128"),
    }
    print(f"{torch.cuda.get_device_name()}, {m}x{n}x{k}, {args.calls} calls each")
    for name, fn in calls.items():
        print(f"  {host_us(fn, args.calls):8.1f} us  {name}")
    fn = calls["tessera fp8 1x128 x 128x128"]
    torch.cuda._sleep(int(2e9))
    prof = cProfile.Profile()
    prof.enable()
    for _ in range(args.calls):
        fn()
    prof.disable()
    torch.cuda.synchronize()
    pstats.Stats(prof).sort_stats("tottime").print_stats(14)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
