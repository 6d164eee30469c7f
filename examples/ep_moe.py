"""Expert-parallel MoE layer (tessera.parallel.ExpertParallelMoE) across the GPUs of a host:
check it against its reference, then time communication, GEMMs, the plain step and the
overlapped step.

    torchrun --nproc-per-node=8 examples/ep_moe.py [--dtype bf16|fp8] [--tokens 4096]
        [--experts-per-gpu 8] [--top-k 8] [--sm-budget 112] [--micro-batches 2] [--transport nccl|copy_engine]
        [--check] [--csv out.csv]

DeepSeek-V3's routed experts by default (hidden 7168, intermediate 2048, top-8), with
--experts-per-gpu of them on each GPU (V3 has 256 in all). Rank 0 prints one CSV line: times in
ms (the slowest rank's median), overlap = overlapped / max(comm, gemm under the budget),
speedup = sequential / overlapped. comm: dispatch (the gather of the rows it sends, FP8: their
quantization, then the all-to-all) + combine of the whole batch;
gemm: the expert stage (permutation, grouped GEMMs, SwiGLU, FP8 quantization); sequential: the
layer's forward; sequential_mb: forward on each micro-batch in turn (what splitting alone costs);
overlapped: forward_overlapped over --micro-batches. Without CUDA it runs on
gloo with the torch backend (small sizes only).
"""
import argparse
import sys

from parallel_common import add_common_args, import_path, median_ms, profile, run, slowest, system_info

import_path()

import torch  # noqa: E402

from tessera.parallel import ExpertParallelMoE  # noqa: E402

TOLERANCE = {"bf16": 2e-2, "fp8": 8e-2}  # ||out - ref|| / ||ref||


def parse():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--dtype", choices=["bf16", "fp8"], default="bf16")
    p.add_argument("--tokens", type=int, default=4096, help="tokens per GPU")
    p.add_argument("--hidden", type=int, default=7168)
    p.add_argument("--intermediate", type=int, default=2048)
    p.add_argument("--experts-per-gpu", type=int, default=8)
    p.add_argument("--top-k", type=int, default=8)
    p.add_argument("--micro-batches", type=int, default=2)
    return add_common_args(p, "layer").parse_args()


def check(args, rank, world, device):
    """forward and forward_overlapped of a small layer against reference_forward, with uneven
    token counts; returns the worst relative error over the ranks."""
    layer = ExpertParallelMoE(512, 256, 4 * world, min(args.top_k, 4), dtype=args.dtype, device=device,
                              backend=args.backend, sm_budget=args.sm_budget or None, seed=1,
                              transport=args.transport)
    x = torch.randn(200 + 37 * rank, 512, device=device, generator=torch.Generator(device).manual_seed(rank))
    x = x.to(torch.bfloat16)
    ref = layer.reference_forward(x)
    worst = 0.0
    for name, out in (("forward", layer(x)), ("overlapped", torch.cat(layer.forward_overlapped(list(x.chunk(2)))))):
        err = slowest(((out.float() - ref).norm() / ref.norm()).item(), device)
        worst = max(worst, err)
        if rank == 0:
            ok = "ok" if err < TOLERANCE[args.dtype] else "FAILED"
            print(f"check {name} ({args.dtype}, world {world}): rel. error {err:.3e} {ok}", flush=True)
    return worst


def bench(args, rank, world, device):
    """The timings of the full-size layer, as the CSV row."""
    layer = ExpertParallelMoE(args.hidden, args.intermediate, args.experts_per_gpu * world, args.top_k,
                              dtype=args.dtype, sm_budget=args.sm_budget or None, device=device,
                              backend=args.backend, transport=args.transport)
    x = torch.randn(args.tokens, args.hidden, device=device, generator=torch.Generator(device).manual_seed(rank))
    x = x.to(torch.bfloat16)
    state = layer.prepare(x)
    layer.dispatch(state)
    layer.experts(state)
    micro = list(x.chunk(args.micro_batches))
    t = {"prepare_ms": lambda: layer.prepare(x),
         "comm_ms": lambda: (layer.dispatch(state), layer.combine(state)),
         "gemm_full_ms": lambda: layer.experts(state),
         "gemm_budget_ms": lambda: layer.experts(state, budgeted=True),
         "sequential_ms": lambda: layer(x),
         "sequential_mb_ms": lambda: [layer(h) for h in micro],
         "overlapped_ms": lambda: layer.forward_overlapped(micro)}
    if args.profile:
        profile({"sequential": t["sequential_ms"], "overlapped": t["overlapped_ms"]}, device, rank, args.profile)
    t = {k: median_ms(fn, device, args.iters, args.warmup) for k, fn in t.items()}
    row = {"world": world, "dtype": args.dtype, "tokens_per_gpu": args.tokens, "hidden": args.hidden,
           "intermediate": args.intermediate, "experts_per_gpu": args.experts_per_gpu, "top_k": args.top_k,
           "sm_budget": args.sm_budget, "transport": args.transport,
           "micro_batches": args.micro_batches, **t,
           "overlap": t["overlapped_ms"] / max(t["comm_ms"], t["gemm_budget_ms"]),
           "speedup": t["sequential_ms"] / t["overlapped_ms"],
           "tokens_per_s_per_gpu": round(args.tokens / (t["overlapped_ms"] / 1e3)),
           "backend": layer.backend.name, **system_info(device)}
    return row


if __name__ == "__main__":
    sys.exit(run(parse, check, bench, lambda args: TOLERANCE[args.dtype]))
