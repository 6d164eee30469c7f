#!/usr/bin/env python3
"""An MoE layer's training step (issue 35): DeepSeek-V3's expert shapes (hidden K = 7168, expert
width 2048: gate_up [G, 4096, 7168], down [G, 7168, 2048]), bf16, tokens sorted by expert (the
contiguous layout), G = 8 and 32 experts of 4096 tokens on average, uniform or skewed. Per case:

  step      forward + backward of x -> grouped gate_up -> SwiGLU -> grouped down, loss gradient
            given: torch.ops.tessera.grouped_mm (autograd through tessera's grouped GEMMs and its
            weight gradient) against torch._grouped_mm (autograd through torch's)
  wgrad     the gate_up weight gradient alone, dW[g] = dY_g^T X_g over each expert's tokens:
            tessera.grouped_mm_wgrad (the k-grouped kernel; where this build has it) against
            torch._grouped_mm(dy.T, x, offs=offs) (torch's k-grouped form)

Each provider is checked first (relative Frobenius error of the step's weight gradients against
torch's step, of dW against a per-expert float32 product), then timed by CUDA events: the median
of rounds of back-to-back calls.
One line per row; --csv writes them with the device in the header.
  python3 bench/moe_train.py [--experts 8,32] [--csv FILE]"""
import argparse

import torch
import torch.nn.functional as F

import tessera
from moe_ffn import timed  # bench/moe_ffn.py, beside this script

HIDDEN, WIDTH, TOKENS_PER_EXPERT = 7168, 2048, 4096


def offsets(groups, skewed, gen):
    """int32 cumulative token ends of `groups` experts averaging TOKENS_PER_EXPERT tokens: even, or
    skewed (weights drawn as u^4: a few experts take most tokens, some almost none), each a
    multiple of 16 tokens (torch._grouped_mm's alignment for bf16 offsets)."""
    total = groups * TOKENS_PER_EXPERT
    if not skewed:
        sizes = [TOKENS_PER_EXPERT] * groups
    else:
        w = torch.rand(groups, generator=gen, device="cuda").cpu() ** 4
        sizes = [int(v) // 16 * 16 for v in (w / w.sum() * total).tolist()]
        sizes[0] += total - sum(sizes)
    return torch.tensor(sizes).cumsum(0).to(torch.int32).cuda(), total


def rel(a, b):
    """Relative Frobenius error of a against b."""
    return ((a.float() - b.float()).norm() / b.float().norm().clamp(min=1e-30)).item()


def layer_step(mm, x, w1, w2, offs, gy):
    """One forward + backward of the MoE layer with grouped GEMM `mm(x, w [G, N, K], offs)`; returns
    (dw1, dw2)."""
    w1.grad = w2.grad = None
    h = mm(x, w1, offs)
    a = F.silu(h[:, :WIDTH]) * h[:, WIDTH:]
    y = mm(a, w2, offs)
    y.backward(gy)
    return w1.grad, w2.grad


def tessera_mm(x, w, offs):
    return torch.ops.tessera.grouped_mm(x, w, offs)


def torch_mm(x, w, offs):
    return torch._grouped_mm(x, w.transpose(1, 2), offs=offs)


def run_case(groups, skewed, gen):
    offs, total = offsets(groups, skewed, gen)
    x = torch.randn(total, HIDDEN, device="cuda", dtype=torch.bfloat16, generator=gen)
    w1 = (torch.randn(groups, 2 * WIDTH, HIDDEN, device="cuda", dtype=torch.bfloat16, generator=gen)
          / HIDDEN ** 0.5).requires_grad_()
    w2 = (torch.randn(groups, HIDDEN, WIDTH, device="cuda", dtype=torch.bfloat16, generator=gen)
          / WIDTH ** 0.5).requires_grad_()
    gy = torch.randn(total, HIDDEN, device="cuda", dtype=torch.bfloat16, generator=gen)
    case = {"experts": groups, "tokens": total, "skewed": int(skewed)}
    # flops of the step: forward 2 GEMMs, backward 4 (dgrad and wgrad of each)
    step_flops = 3 * 2.0 * total * (2 * WIDTH * HIDDEN + HIDDEN * WIDTH)
    # the step's weight gradients against torch's step (the same graph through torch's grouped GEMMs)
    reference = [g.clone() for g in layer_step(torch_mm, x, w1, w2, offs, gy)]
    rows = []
    for provider, mm in (("tessera", tessera_mm), ("torch", torch_mm)):
        err = max(rel(g, r) for g, r in zip(layer_step(mm, x, w1, w2, offs, gy), reference))
        ms = timed(lambda: layer_step(mm, x, w1, w2, offs, gy), rounds=5, calls=3)
        rows.append(dict(case, part="step", provider=provider, ms=f"{ms:.3f}", tflops=f"{step_flops / ms / 1e9:.1f}",
                         rel_error=f"{err:.2e}"))
    # the gate_up weight gradient alone: dy [T, 4096], x [T, 7168], against a per-expert float32 loop
    dy = torch.randn(total, 2 * WIDTH, device="cuda", dtype=torch.bfloat16, generator=gen)
    wgrad_flops = 2.0 * total * 2 * WIDTH * HIDDEN
    ends = [0] + offs.tolist()
    exact = torch.stack([dy[ends[e]:ends[e + 1]].float().T @ x[ends[e]:ends[e + 1]].float() for e in range(groups)])
    providers = [("torch", lambda: torch._grouped_mm(dy.T, x, offs=offs))]
    if hasattr(tessera, "grouped_mm_wgrad"):
        providers.insert(0, ("tessera", lambda: tessera.grouped_mm_wgrad(dy, x, offs)))
    for provider, fn in providers:
        e = rel(fn(), exact)
        ms = timed(fn, rounds=5, calls=3)
        rows.append(dict(case, part="wgrad", provider=provider, ms=f"{ms:.3f}",
                         tflops=f"{wgrad_flops / ms / 1e9:.1f}", rel_error=f"{e:.2e}"))
    by = {(r["part"], r["provider"]): float(r["ms"]) for r in rows}
    for r in rows:
        r["vs_torch"] = f"{by[(r['part'], 'torch')] / float(r['ms']):.3f}"
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--experts", default="8,32", help="expert counts, comma-separated")
    ap.add_argument("--csv", help="also write the rows here")
    args = ap.parse_args()
    if not torch.cuda.is_available():
        raise SystemExit("moe_train.py: needs a CUDA device")
    gen = torch.Generator(device="cuda").manual_seed(0)
    rows, failed = [], False
    for groups in (int(g) for g in args.experts.split(",")):
        for skewed in (False, True):
            for r in run_case(groups, skewed, gen):
                rows.append(r)
                failed |= float(r["rel_error"]) > 2e-2  # bf16 sums in another order: well under this
                print(" ".join(f"{k}={v}" for k, v in r.items()), flush=True)
    if args.csv:
        with open(args.csv, "w") as f:
            f.write(f"# device={torch.cuda.get_device_name()} torch={torch.__version__} "
                    f"tessera={tessera.version_string()}\n")
            f.write(",".join(rows[0]) + "\n")
            for r in rows:
                f.write(",".join(str(v) for v in r.values()) + "\n")
    if failed:
        raise SystemExit("moe_train.py: a provider's result is off (rel_error > 2e-2)")


if __name__ == "__main__":
    main()
