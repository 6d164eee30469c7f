"""An FP8 D written by the GEMM's epilogue (issue 33) against the GEMM writing bf16 and a second
kernel quantizing it, on DeepSeek-V3-shaped dense FP8 problems, in one process on the same data:

  1x128 fused     tessera.gemm(..., out_dtype="e4m3", out_scale="1x128"): D and its factors, the
                  next GEMM's 1x128 A (DeepSeek-V3's requantization)
  1x128 unfused   tessera.gemm to bf16, then tessera.quantize_fp8(y, "1x128")
  tensor fused    tessera.gemm(..., out_dtype="e4m3", out_scale=s, amax=amax), per-tensor inputs
  tensor unfused  tessera.gemm to bf16, then tessera.quantize_fp8(y, "tensor") (amax, then quantize)
  cuBLASLt        torch._scaled_mm with per-tensor inputs writing e4m3 itself (scale_result), where
                  this torch has it (its amax is not returned)
  bf16 only       tessera.gemm to bf16 (the 1x128 inputs): what the GEMM alone costs

Each is timed by CUDA events (median of rounds of back-to-back calls). Every FP8 result is
dequantized and checked against the bf16 product (relative Frobenius error). One line per case,
CSV with --csv.
  python3 bench/fp8_out.py [--cases 4096x7168x2048,...] [--csv FILE]"""
import argparse
import statistics

import torch

import tessera

# M x N x K: DeepSeek-V3's dense projections at 4096 tokens and at decode-sized 128, and 8192^3.
CASES = ["4096x7168x2048", "4096x2112x7168", "4096x24576x1536", "128x7168x2048", "8192x8192x8192"]
E4M3_MAX = 448.0


def timed(fn, rounds=7, calls=10):
    """Median milliseconds of one call over `rounds` rounds of `calls` back-to-back calls."""
    fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(rounds):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(calls):
            fn()
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end) / calls)
    return statistics.median(times)


def rel(got, want):
    """||got - want|| / ||want|| in float64."""
    got, want = got.double(), want.double()
    return ((got - want).norm() / want.norm()).item()


def run_case(label):
    m, n, k = (int(x) for x in label.split("x"))
    gen = torch.Generator(device="cuda").manual_seed(0)
    a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16, generator=gen)
    w = torch.randn(n, k, device="cuda", dtype=torch.bfloat16, generator=gen) / k ** 0.5
    qa, sa = tessera.quantize_fp8(a, "1x128")
    qw, sw = tessera.quantize_fp8(w, "128x128")
    ta, tsa = tessera.quantize_fp8(a, "tensor")
    tw, tsw = tessera.quantize_fp8(w, "tensor")
    block_args = dict(scale_a=sa, scale_b=sw, scale_recipe_a="1x128", scale_recipe_b="128x128")
    tensor_args = dict(scale_a=tsa, scale_b=tsw)
    out_scale = torch.tensor([0.5], device="cuda")
    amax = torch.empty(1, device="cuda")

    def bf16_only():
        return tessera.gemm(qa, qw.T, **block_args)

    def fused_1x128():
        return tessera.gemm(qa, qw.T, out_dtype="e4m3", out_scale="1x128", **block_args)

    def unfused_1x128():
        return tessera.quantize_fp8(tessera.gemm(qa, qw.T, **block_args), "1x128")

    def fused_tensor():
        return tessera.gemm(ta, tw.T, out_dtype="e4m3", out_scale=out_scale, amax=amax, **tensor_args)

    def unfused_tensor():
        return tessera.quantize_fp8(tessera.gemm(ta, tw.T, **tensor_args), "tensor")

    calls = [bf16_only, fused_1x128, unfused_1x128, fused_tensor, unfused_tensor]

    # cuBLASLt's own FP8 D (per-tensor inputs), where this torch's _scaled_mm writes one.
    def cublaslt_tensor():
        return torch._scaled_mm(ta, tw.T, scale_a=tsa, scale_b=tsw, scale_result=out_scale,
                                out_dtype=torch.float8_e4m3fn)

    try:
        cublaslt_tensor()
        calls.append(cublaslt_tensor)
    except (RuntimeError, TypeError) as e:
        print(f"{label}: cuBLASLt's FP8 D not run ({str(e).splitlines()[0][:120]})")

    # Checks: every FP8 D dequantized against the bf16 product of the same inputs.
    y_block = bf16_only().float()
    y_tensor = tessera.gemm(ta, tw.T, **tensor_args).float()
    q, f = fused_1x128()
    err = {"fused_1x128": rel(q.float() * f.repeat_interleave(128, 1)[:, :n], y_block)}
    q, f = unfused_1x128()
    err["unfused_1x128"] = rel(q.float() * f.repeat_interleave(128, 1)[:, :n], y_block)
    q = fused_tensor()
    err["fused_tensor"] = rel(q.float() / out_scale, y_tensor)
    err["amax"] = abs(amax.item() - y_tensor.abs().max().item()) / y_tensor.abs().max().item()
    q, s = unfused_tensor()
    err["unfused_tensor"] = rel(q.float() * s, y_tensor)
    if cublaslt_tensor in calls:
        err["cublaslt_tensor"] = rel(cublaslt_tensor().float() / out_scale, y_tensor)  # informational
    # e4m3 keeps 3 mantissa bits: a relative error near 2^-5 of the values' norm; bf16 rounding of y
    # adds ~2^-9. The amax is of float32 sums, y's of bf16 ones.
    ok = all(err[key] < 0.05 for key in ("fused_1x128", "unfused_1x128", "fused_tensor", "unfused_tensor")) \
        and err["amax"] < 1e-2
    t = {fn.__name__: timed(fn) for fn in calls}
    t.setdefault("cublaslt_tensor", float("nan"))
    err.setdefault("cublaslt_tensor", float("nan"))
    flop = 2.0 * m * n * k
    print(f"{label}: bf16 {t['bf16_only']:.4f} ms ({flop / t['bf16_only'] / 1e9:.0f} TF/s); 1x128 fused "
          f"{t['fused_1x128']:.4f}, unfused {t['unfused_1x128']:.4f} ({t['unfused_1x128'] / t['fused_1x128']:.2f}x); "
          f"tensor fused {t['fused_tensor']:.4f}, unfused {t['unfused_tensor']:.4f} "
          f"({t['unfused_tensor'] / t['fused_tensor']:.2f}x), cuBLASLt {t['cublaslt_tensor']:.4f}; rel err "
          + ", ".join(f"{key} {v:.3g}" for key, v in err.items()) + ("" if ok else "  CHECK FAILED"))
    row = [label, m, n, k] + [f"{t[key]:.4f}" for key in ("bf16_only", "fused_1x128", "unfused_1x128",
                                                              "fused_tensor", "unfused_tensor", "cublaslt_tensor")]
    row += [f"{err[key]:.3g}" for key in ("fused_1x128", "unfused_1x128", "fused_tensor", "unfused_tensor", "amax",
                                          "cublaslt_tensor")] + [int(ok)]
    return ",".join(str(x) for x in row), ok


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", default=",".join(CASES), help="comma-separated MxNxK (default: %(default)s)")
    ap.add_argument("--csv", help="write one row per case here")
    args = ap.parse_args()
    labels = args.cases.split(",")
    for label in labels:
        parts = label.split("x")
        if len(parts) != 3 or not all(p.isdigit() and int(p) > 0 for p in parts):
            ap.error(f"case {label!r}: want MxNxK, e.g. 4096x7168x2048")
    print(f"device: {torch.cuda.get_device_name()}, torch {torch.__version__}, tessera {tessera.__version__}")
    rows, failed = ["case,m,n,k,bf16_ms,fused_1x128_ms,unfused_1x128_ms,fused_tensor_ms,unfused_tensor_ms,"
                    "cublaslt_tensor_ms,err_fused_1x128,err_unfused_1x128,err_fused_tensor,err_unfused_tensor,"
                    "err_amax,err_cublaslt_tensor,ok"], 0
    for label in labels:
        row, ok = run_case(label)
        rows.append(row)
        failed += not ok
    if args.csv:
        with open(args.csv, "w") as f:
            f.write(f"# {torch.cuda.get_device_name()}, torch {torch.__version__}, tessera {tessera.__version__}; "
                    "ms: median of rounds of 10 back-to-back calls (CUDA events); err: relative Frobenius error "
                    "of the dequantized FP8 D against the bf16 product of the same inputs (amax: relative)\n")
            f.write("\n".join(rows) + "\n")
    raise SystemExit(1 if failed else 0)


if __name__ == "__main__":
    main()
