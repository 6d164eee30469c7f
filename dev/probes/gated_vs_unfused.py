"""SwiGLU fused into tessera's GEMM (gate="interleaved") against the unfused sequences: tessera's
GEMM writing all N columns then torch's silu(gate) * up, and torch.mm (cuBLAS) then the same; bf16,
interleaved (gate, up) weight columns. Same process, same data, CUDA-event timing (median of
rounds of 10 calls, bench/moe_ffn.py's timer). Prints one line per shape; CSV to --csv. Run on a
GPU from the checkout:
  PYTHONPATH=python TESSERA_LIBRARY=build/lib/libtessera.so python3 dev/probes/gated_vs_unfused.py"""
import argparse
import os
import sys

import torch
import torch.nn.functional as F

import tessera

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench"))
from moe_ffn import timed  # noqa: E402  (CUDA-event medians, shared with the MoE FFN benchmark)

SHAPES = [(4096, 28672, 4096), (8192, 8192, 8192), (4096, 4096, 7168), (128, 28672, 4096), (16, 28672, 4096)]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--csv")
    args = ap.parse_args()
    rows = ["m,n,k,fused_ms,tessera_unfused_ms,torch_unfused_ms,max_rel_err"]
    for m, n, k in SHAPES:
        x = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
        w = torch.randn(n, k, device="cuda", dtype=torch.bfloat16) / k ** 0.5
        out = torch.empty(m, n // 2, device="cuda", dtype=torch.bfloat16)
        full = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)

        def fused():
            tessera.gemm(x, w.t(), out, activation="silu", gate="interleaved")

        def tessera_unfused():
            tessera.gemm(x, w.t(), full)
            return F.silu(full[:, 0::2]) * full[:, 1::2]

        def torch_unfused():
            y = torch.mm(x, w.t())
            return F.silu(y[:, 0::2]) * y[:, 1::2]

        fused()
        want = torch_unfused().float()
        err = ((out.float() - want).abs().max() / want.abs().max()).item()
        t = [timed(f) for f in (fused, tessera_unfused, torch_unfused)]
        rows.append(f"{m},{n},{k},{t[0]:.4f},{t[1]:.4f},{t[2]:.4f},{err:.2e}")
        print(f"{m}x{n}x{k}: fused {t[0]:.4f} ms, tessera + torch SwiGLU {t[1]:.4f}, torch.mm + SwiGLU {t[2]:.4f} "
              f"(fused {t[2] / t[0]:.2f}x torch, {t[1] / t[0]:.2f}x unfused tessera); max rel err {err:.1e}")
    if args.csv:
        open(args.csv, "w").write("\n".join(rows) + "\n")


if __name__ == "__main__":
    main()
