#!/usr/bin/env python3
"""The MoE layer's grouped dgrad (issue 35), dX[rows of g] = dY[rows of g] @ W[g] on the [G, N, K]
weights, three ways in one process on the same data: tessera reading the weights in place
(N-major: the grouped_f16_nmajor kernels), tessera on a K-major copy made per call (what the
autograd did before), and torch._grouped_mm. DeepSeek-V3's expert shapes, 8 and 32 experts of
4096 tokens; results checked against torch first; CUDA events, median of rounds.

    python3 dev/probes/grouped_dgrad.py
"""
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, os.pardir, "bench"))
from moe_ffn import timed  # noqa: E402  (bench/moe_ffn.py)

import tessera  # noqa: E402


def main():
    gen = torch.Generator(device="cuda").manual_seed(0)
    for groups, n, k in [(8, 4096, 7168), (8, 7168, 2048), (32, 4096, 7168), (32, 7168, 2048)]:
        tokens = groups * 4096
        offs = torch.arange(1, groups + 1, device="cuda", dtype=torch.int32) * 4096
        dy = torch.randn(tokens, n, device="cuda", dtype=torch.bfloat16, generator=gen)
        w = torch.randn(groups, n, k, device="cuda", dtype=torch.bfloat16, generator=gen) / n ** 0.5
        calls = {"in place (N-major)": lambda: tessera.grouped_mm(dy, w, offs, w_layout="kn"),
                 "K-major copy": lambda: tessera.grouped_mm(dy, w.transpose(1, 2).contiguous(), offs),
                 "torch._grouped_mm": lambda: torch._grouped_mm(dy, w, offs=offs)}
        want = calls["torch._grouped_mm"]().float()
        flops = 2.0 * tokens * n * k
        line = [f"G={groups} T={tokens} n={n} k={k}:"]
        for name, fn in calls.items():
            err = ((fn().float() - want).norm() / want.norm()).item()
            ms = timed(fn, rounds=5, calls=5)
            line.append(f"{name} {ms:.3f} ms {flops / ms / 1e9:.0f} TF/s (err {err:.1e});")
        print(" ".join(line), flush=True)


if __name__ == "__main__":
    main()
