"""Tensor-parallel MLP pair (tessera.parallel.TensorParallelMLP) across the GPUs of a host:
check it against its reference, then time communication, GEMMs, the plain step and the
chunked, overlapped step.

    torchrun --nproc-per-node=8 examples/tp_pair.py [--total-tokens 8192] [--hidden 7168] [--ffn 18432]
        [--chunks 4] [--sm-budget 112] [--transport nccl|copy_engine] [--check] [--csv out.csv]

--total-tokens is M, the tokens in all, M / world on each GPU (sequence parallel). Rank 0 prints one CSV line:
times in ms (the slowest rank's median), overlap = overlapped / max(comm, gemm under the
budget), speedup = sequential / overlapped. comm: all-gather + reduce-scatter of the whole
batch; gemm: both GEMMs of the whole batch; sequential: forward_sequential (no chunks, no
overlap); overlapped: forward with --chunks. Without CUDA it runs on gloo with the torch
backend (small sizes only).
"""
import argparse
import sys

from parallel_common import add_common_args, import_path, median_ms, profile, run, slowest, system_info

import_path()

import torch  # noqa: E402

from tessera.parallel import TensorParallelMLP  # noqa: E402

TOLERANCE = 2e-2  # ||out - ref|| / ||ref||, bf16


def parse():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--total-tokens", type=int, default=8192, help="tokens in all (M), divisible by the world size")
    p.add_argument("--hidden", type=int, default=7168)
    p.add_argument("--ffn", type=int, default=18432)
    p.add_argument("--chunks", type=int, default=4)
    p.add_argument("--activation", default="gelu")
    return add_common_args(p, "pair").parse_args()


def check(args, rank, world, device):
    """forward (1, 2 and 3 chunks; 3 uneven) and forward_sequential of a small pair against
    reference_forward; returns the worst relative error over the ranks."""
    layer = TensorParallelMLP(512, 256 * world, activation=args.activation, device=device, backend=args.backend,
                              sm_budget=args.sm_budget or None, seed=1, transport=args.transport)
    x = torch.randn(100, 512, device=device, generator=torch.Generator(device).manual_seed(rank)).to(torch.bfloat16)
    ref = layer.reference_forward(x)
    runs = [(f"chunks={c}", lambda c=c: layer(x, chunks=c)) for c in (1, 2, 3)]
    runs.append(("sequential", lambda: layer.forward_sequential(x)))
    worst = 0.0
    for name, fn in runs:
        err = slowest(((fn().float() - ref).norm() / ref.norm()).item(), device)
        worst = max(worst, err)
        if rank == 0:
            print(f"check {name} (world {world}): rel. error {err:.3e} {'ok' if err < TOLERANCE else 'FAILED'}",
                  flush=True)
    return worst


def bench(args, rank, world, device):
    """The timings of the full-size pair, as the CSV row."""
    if args.total_tokens % world:
        raise SystemExit(f"--total-tokens {args.total_tokens} is not divisible by the world size {world}")
    m = args.total_tokens // world
    layer = TensorParallelMLP(args.hidden, args.ffn, activation=args.activation, chunks=args.chunks,
                              sm_budget=args.sm_budget or None, device=device, backend=args.backend,
                              transport=args.transport)
    x = torch.randn(m, args.hidden, device=device, generator=torch.Generator(device).manual_seed(rank))
    x = x.to(torch.bfloat16)
    (whole,), _ = layer.split(x, 1)
    layer.gather(whole)
    layer.gemms(whole)
    t = {"comm_ms": lambda: (layer.gather(whole), layer.scatter(whole)),
         "gemm_full_ms": lambda: layer.gemms(whole),
         "gemm_budget_ms": lambda: layer.gemms(whole, budgeted=True),
         "sequential_ms": lambda: layer.forward_sequential(x),
         "overlapped_ms": lambda: layer(x)}
    if args.profile:
        profile({"sequential": t["sequential_ms"], "overlapped": t["overlapped_ms"]}, device, rank, args.profile)
    t = {k: median_ms(fn, device, args.iters, args.warmup) for k, fn in t.items()}
    flops = 2 * 2 * args.total_tokens * args.hidden * (args.ffn // world)  # both GEMMs of one GPU
    return {"world": world, "dtype": "bf16", "m": args.total_tokens, "tokens_per_gpu": m, "hidden": args.hidden,
            "ffn": args.ffn, "chunks": args.chunks, "activation": args.activation, "sm_budget": args.sm_budget,
            "transport": args.transport,
            **t,
            "overlap": t["overlapped_ms"] / max(t["comm_ms"], t["gemm_budget_ms"]),
            "speedup": t["sequential_ms"] / t["overlapped_ms"],
            "tokens_per_s_per_gpu": round(m / (t["overlapped_ms"] / 1e3)),
            "tflops_per_gpu": flops / (t["overlapped_ms"] / 1e3) / 1e12,
            "backend": layer.backend.name, **system_info(device)}


if __name__ == "__main__":
    sys.exit(run(parse, check, bench, lambda args: TOLERANCE))
