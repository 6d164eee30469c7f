#!/usr/bin/env python3
"""An FP8 D written by the GEMM's epilogue (issue 33) beside the GEMM writing bf16 and a second kernel
quantizing it, in one process, on one GPU, on the same data.

    python3 bench/fp8_out.py --csv bench/results/h100-fp8-out.csv
    python3 bench/fp8_out.py --shapes 4096x7168x2048 --rounds 3

Per shape (M N K: DeepSeek-V3's dense projections at 4096 and 128 tokens, and 8192^3), A e4m3 and
W e4m3, two recipes:
  block   A 1x128 x W 128x128 factors (DeepSeek-V3):
            tessera fused      tessera.gemm(..., out_dtype="e4m3", out_scale="1x128"): D and its
                               1x128 factors, the next GEMM's A
            tessera unfused    tessera.gemm to bf16, then tessera.quantize_fp8(y, "1x128")
            tessera bf16 D     tessera.gemm to bf16 alone (what the GEMM costs)
  tensor  per-tensor factors:
            tessera fused      tessera.gemm(..., out_dtype="e4m3", out_scale=s, amax=amax)
            tessera unfused    tessera.gemm to bf16, then tessera.quantize_fp8(y, "tensor") (its amax,
                               then the quantization)
            tessera bf16 D     tessera.gemm to bf16 alone
            cuBLASLt FP8 D     torch._scaled_mm writing e4m3 itself (scale_result; no amax), where
                               this torch has it
Every FP8 D is dequantized and checked against the bf16 product of the same inputs (relative
Frobenius error: e4m3's 3 mantissa bits give ~2^-5; a FAIL row makes the script exit 1), the amax
against that product's largest magnitude. Timing as bench/grouped.py (CUDA events behind a sleep
kernel, medians of rounds, NVML clock and power: TF/s per GHz, TF/J); bursts.
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, os.pardir, "python"))  # the repository's package, unless installed

import torch  # noqa: E402

import energy  # noqa: E402
import tessera  # noqa: E402
from grouped import bench_parser, bench_timer, write_csv  # noqa: E402
from training import rel, timed  # noqa: E402

SHAPES = [(4096, 7168, 2048), (4096, 2112, 7168), (4096, 24576, 1536), (128, 7168, 2048), (8192, 8192, 8192)]
COLUMNS = ["recipe", "m", "n", "k", "provider", "ms", "tflops", "vs_unfused", "rel_error", "sm_mhz", "board_w",
           "tflops_per_ghz", "tflop_per_j", "plan", "note"]
COLUMN_DOC = """# columns: recipe = block (1x128 x 128x128 inputs, 1x128 D factors) | tensor (per-tensor inputs and D
# scale); provider = what ran (see bench/fp8_out.py); ms = median time; tflops = 2 M N K / time; vs_unfused =
# the unfused tessera pair's time / this row's (> 1: faster); rel_error = relative Frobenius error of the
# dequantized D against the bf16 product of the same inputs (the bf16 row: 0); sm_mhz, board_w, tflops_per_ghz,
# tflop_per_j as bench/grouped.py; plan = tessera's GEMM plan (the unfused pair's: its GEMM's)
"""
BOUND = 0.05  # e4m3 (3 mantissa bits): ~2^-5 of the values' norm, plus bf16 rounding of the reference
AMAX_BOUND = 1e-2  # the amax of float32 sums against the largest bf16 one: ~2^-8


def dequantized(q, factors, n):
    """An FP8 D times its 1x128 factors (M x ceil(N/128)), as float32."""
    return q.float() * factors.repeat_interleave(128, 1)[:, :n]


def first_plan(*args, **kwargs):
    """The plan tessera.gemm takes for these arguments (gemm_plans' first: the heuristic's pick)."""
    plans = tessera.gemm_plans(*args, **kwargs)
    return plans[0].name if plans else ""


def block_providers(m, n, k, gen):
    """The 1x128 x 128x128 recipe: {name: fn}, {name: dequantizing check of fn's result}."""
    a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16, generator=gen)
    w = torch.randn(n, k, device="cuda", dtype=torch.bfloat16, generator=gen) / k ** 0.5
    (qa, sa), (qw, sw) = tessera.quantize_fp8(a, "1x128"), tessera.quantize_fp8(w, "128x128")
    args = dict(scale_a=sa, scale_b=sw, scale_recipe_a="1x128", scale_recipe_b="128x128")
    y = tessera.gemm(qa, qw.T, **args)
    providers = {"tessera fused": lambda: tessera.gemm(qa, qw.T, out_dtype="e4m3", out_scale="1x128", **args),
                 "tessera unfused": lambda: tessera.quantize_fp8(tessera.gemm(qa, qw.T, **args), "1x128"),
                 "tessera bf16 D": lambda: tessera.gemm(qa, qw.T, **args)}
    checks = {"tessera fused": lambda r: (rel(dequantized(*r, n), y), ""),
              "tessera unfused": lambda r: (rel(dequantized(*r, n), y), ""),
              "tessera bf16 D": lambda r: (rel(r, y), "")}
    bf16_plan = first_plan(qa, qw.T, **args)
    plans = {"tessera fused": first_plan(qa, qw.T, out_dtype="e4m3", out_scale="1x128", **args),
             "tessera unfused": bf16_plan, "tessera bf16 D": bf16_plan}
    return providers, checks, plans


def tensor_providers(m, n, k, gen):
    """The per-tensor recipe, D scaled by 0.5 with its amax: {name: fn}, {name: check}."""
    a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16, generator=gen)
    w = torch.randn(n, k, device="cuda", dtype=torch.bfloat16, generator=gen) / k ** 0.5
    (qa, sa), (qw, sw) = tessera.quantize_fp8(a, "tensor"), tessera.quantize_fp8(w, "tensor")
    y = tessera.gemm(qa, qw.T, scale_a=sa, scale_b=sw)
    largest = y.float().abs().max().item()
    scale, amax = torch.tensor([0.5], device="cuda"), torch.empty(1, device="cuda")

    def amax_note():
        off = abs(amax.item() - largest) / largest
        return "" if off < AMAX_BOUND else f"amax off by {off:.2e}"

    providers = {
        "tessera fused": lambda: tessera.gemm(qa, qw.T, scale_a=sa, scale_b=sw, out_dtype="e4m3", out_scale=scale,
                                              amax=amax),
        "tessera unfused": lambda: tessera.quantize_fp8(tessera.gemm(qa, qw.T, scale_a=sa, scale_b=sw), "tensor"),
        "tessera bf16 D": lambda: tessera.gemm(qa, qw.T, scale_a=sa, scale_b=sw)}
    checks = {"tessera fused": lambda r: (rel(r.float() / scale, y), amax_note()),
              "tessera unfused": lambda r: (rel(r[0].float() * r[1], y), ""),
              "tessera bf16 D": lambda r: (rel(r, y), "")}

    def cublaslt():
        r = torch._scaled_mm(qa, qw.T, scale_a=sa, scale_b=sw, scale_result=scale, out_dtype=torch.float8_e4m3fn)
        return r[0] if isinstance(r, tuple) else r  # (out, amax) in torch before 2.4

    bf16_plan = first_plan(qa, qw.T, scale_a=sa, scale_b=sw)
    plans = {"tessera fused": first_plan(qa, qw.T, scale_a=sa, scale_b=sw, out_dtype="e4m3", out_scale=scale),
             "tessera unfused": bf16_plan, "tessera bf16 D": bf16_plan}
    try:
        cublaslt()
        providers["cuBLASLt FP8 D"] = cublaslt
        # torch passes scale_result as cuBLASLt's D scale, or (torch 2.11, per-tensor inputs) drops it;
        # which of the three is read off the error
        checks["cuBLASLt FP8 D"] = lambda r: min((rel(r.float() / scale, y), ""),
                                                 (rel(r.float() * scale, y), "D = v / scale_result"),
                                                 (rel(r.float(), y), "scale_result not applied"))
    except (RuntimeError, TypeError) as e:
        print(f"cuBLASLt's FP8 D not run: {str(e).splitlines()[0][:160]}")
    return providers, checks, plans


def row(recipe, shape, provider, ms, window, error, unfused_ms, note, plan):
    m, n, k = shape
    tflops = 2.0 * m * n * k / ms / 1e9
    bad = not error <= BOUND or note.startswith("amax")
    return {"recipe": recipe, "m": m, "n": n, "k": k, "provider": provider, "ms": f"{ms:.4f}",
            "tflops": f"{tflops:.1f}", "vs_unfused": f"{unfused_ms / ms:.3f}", "rel_error": f"{error:.2e}",
            "sm_mhz": f"{window.sm_mhz:.0f}", "board_w": f"{window.board_w:.1f}",
            "tflops_per_ghz": f"{energy.per_ghz(tflops, window):.1f}",
            "tflop_per_j": f"{energy.per_joule(tflops, window):.2f}", "plan": plan,
            "note": "; ".join(x for x in (note, "FAIL" if bad else "") if x)}, bad


def main():
    ap = bench_parser(__doc__, reps=20, warmup=3, rounds=2)
    ap.add_argument("--recipes", default="block,tensor")
    ap.add_argument("--shapes", help="MxNxK,... instead of the default shapes")
    args = ap.parse_args()
    recipes = args.recipes.split(",")
    if any(r not in ("block", "tensor") for r in recipes):
        ap.error(f"--recipes {args.recipes}: block and/or tensor")
    timer, device = bench_timer(args)
    rows, failed = [], False
    shapes = [tuple(int(v) for v in s.split("x")) for s in args.shapes.split(",")] if args.shapes else SHAPES
    gen = torch.Generator(device="cuda").manual_seed(0)
    for shape in shapes:
        for recipe in recipes:
            providers, checks, plans = (block_providers if recipe == "block" else tensor_providers)(*shape, gen)
            verdicts = {name: checks[name](fn()) for name, fn in providers.items()}
            result = timed(timer, providers, args.rounds)
            unfused_ms = result["tessera unfused"][0]
            for name, (ms, window) in result.items():
                error, note = verdicts[name]
                r, bad = row(recipe, shape, name, ms, window, error, unfused_ms, note, plans.get(name, ""))
                failed |= bad
                rows.append(r)
                print(f"{recipe:6} {shape[0]:>5}x{shape[1]:>5}x{shape[2]:>5} {name:16} {r['ms']:>9} ms "
                      f"{r['tflops']:>7} TF/s {r['vs_unfused']:>6}x {r['rel_error']} {r['sm_mhz']} MHz {r['plan']} {r['note']}",
                      flush=True)
            write_csv(args.csv, device, rows, COLUMNS, COLUMN_DOC)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
