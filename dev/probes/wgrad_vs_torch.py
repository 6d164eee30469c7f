#!/usr/bin/env python3
"""The k-grouped weight gradient (issue 35) against torch in one process: per case (DeepSeek-V3's
MoE projections, G experts, uniform or skewed tokens), tessera.grouped_mm_wgrad's time beside
torch._grouped_mm(dy.T, x, offs=offs) (torch's k-grouped form) and a per-expert torch.mm loop,
CUDA events over --iters calls after a warm-up, L2 not flushed (the operands are far larger).
Results are checked against the per-expert loop first. Prints a table; --csv writes it.

    python3 dev/probes/wgrad_vs_torch.py [--iters 20] [--csv FILE]
"""
import argparse
import csv
import sys


def offsets(torch, g, tokens_per, skew, gen):
    """int32 cumulative token ends of g experts averaging tokens_per each: even, or skewed (a
    Dirichlet-like draw: a few experts take most tokens, some none)."""
    total = g * tokens_per
    if not skew:
        sizes = [tokens_per] * g
    else:
        w = torch.rand(g, generator=gen) ** 4
        sizes = (w / w.sum() * total).floor().long().tolist()
        sizes[0] += total - sum(sizes)
    return torch.tensor(sizes, dtype=torch.int64).cumsum(0).to(torch.int32).cuda(), total


def timed_ms(torch, fn, iters):
    """Mean milliseconds of fn over iters calls (CUDA events), after 3 warm-up calls."""
    for _ in range(3):
        fn()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(iters):
        fn()
    end.record()
    torch.cuda.synchronize()
    return start.elapsed_time(end) / iters


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--iters", type=int, default=20)
    ap.add_argument("--csv")
    args = ap.parse_args()
    import torch

    import tessera
    if not torch.cuda.is_available():
        sys.exit("wgrad_vs_torch.py: needs a CUDA device")
    gen = torch.Generator().manual_seed(7)
    rows = []
    # (experts, tokens per expert, n, k): dW [G, n, k]; DeepSeek-V3: hidden 7168, expert width 2048
    for g, per, n, k in [(8, 4096, 4096, 7168), (8, 4096, 7168, 2048), (32, 1024, 4096, 7168),
                         (32, 1024, 7168, 2048)]:
        for skew in (False, True):
            offs, total = offsets(torch, g, per, skew, gen)
            dy = torch.randn(total, n, device="cuda", dtype=torch.bfloat16)
            x = torch.randn(total, k, device="cuda", dtype=torch.bfloat16)
            ends = [0] + offs.tolist()

            def loop():
                return torch.stack([dy[ends[i]:ends[i + 1]].T @ x[ends[i]:ends[i + 1]] for i in range(g)])
            ours = tessera.grouped_mm_wgrad(dy, x, offs, out_dtype="f32")
            want = loop().float()
            err = ((ours - want).norm() / want.norm().clamp(min=1e-30)).item()
            flops = 2.0 * total * n * k
            t_ours = timed_ms(torch, lambda: tessera.grouped_mm_wgrad(dy, x, offs, out_dtype="f32"), args.iters)
            t_ours16 = timed_ms(torch, lambda: tessera.grouped_mm_wgrad(dy, x, offs), args.iters)
            try:  # torch's k-grouped form: [n, T] x [T, k] with offs along T
                t_torch = timed_ms(torch, lambda: torch._grouped_mm(dy.T, x, offs=offs), args.iters)
            except (AttributeError, RuntimeError) as e:
                print(f"torch._grouped_mm: {e}".splitlines()[0], flush=True)
                t_torch = float("nan")
            t_loop = timed_ms(torch, loop, max(3, args.iters // 4))
            rows.append({"experts": g, "tokens": total, "n": n, "k": k, "skew": int(skew), "rel_error": f"{err:.2e}",
                         "tessera_f32_ms": f"{t_ours:.4f}", "tessera_bf16_ms": f"{t_ours16:.4f}",
                         "torch_grouped_mm_ms": f"{t_torch:.4f}", "torch_loop_ms": f"{t_loop:.4f}",
                         "tessera_bf16_tflops": f"{flops / t_ours16 / 1e9:.1f}",
                         "vs_torch_grouped_mm": f"{t_torch / t_ours16:.3f}"})
            print(" ".join(f"{key}={v}" for key, v in rows[-1].items()), flush=True)
    if args.csv:
        with open(args.csv, "w", newline="") as f:
            f.write(f"# device={torch.cuda.get_device_name()} torch={torch.__version__} "
                    f"tessera={tessera.version_string()}\n")
            w = csv.DictWriter(f, fieldnames=list(rows[0]))
            w.writeheader()
            w.writerows(rows)


if __name__ == "__main__":
    main()
