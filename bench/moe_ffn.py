"""An MoE FFN block (issue 33): x (FP8, 1x128 factors) -> grouped gate_up GEMM -> SwiGLU -> FP8
(1x128) -> grouped down GEMM, on DeepSeek-V3's expert shapes (gate_up N = 2 x 2048, K = 7168; down
N = 7168, K = 2048), tokens sorted by expert (the contiguous layout), in one process on the same
data:

  fused     tessera.grouped_mm with the SwiGLU in its epilogue (gate="interleaved": the gate_up
            weight's rows interleave gate and up), tessera.quantize_fp8, tessera.grouped_mm
  unfused   tessera.grouped_mm writing all 4096 columns, torch's silu(g) * u, then the same
  torch     torch._grouped_mm in bf16 (the same weights dequantized) with torch's SwiGLU

Each is timed by CUDA events (median of rounds of back-to-back calls); the fused output is checked
against the unfused one and both against the bf16 torch path. One line per case, CSV with --csv.
  python3 bench/moe_ffn.py [--cases prefill,decode] [--csv FILE]"""
import argparse
import statistics

import torch
import torch.nn.functional as F

import tessera

# name: (groups, tokens per group, hidden K, expert width: gate_up N / 2)
CASES = {"prefill": (8, 4096, 7168, 2048), "decode": (256, 16, 7168, 2048)}


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


def quantized_weights(g, n, k, gen):
    """[G, N, K] e4m3 weights with their 128x128 factors [G, N/128, K/128], and the bf16 weights they
    stand for (dequantized), as torch._grouped_mm's [G, K, N] operand."""
    q = torch.empty(g, n, k, device="cuda", dtype=torch.float8_e4m3fn)
    s = torch.empty(g, -(-n // 128), -(-k // 128), device="cuda", dtype=torch.float32)
    w = torch.empty(g, n, k, device="cuda", dtype=torch.bfloat16)
    for e in range(g):  # an expert at a time: 256 experts' float32 copies would not fit
        q[e], s[e] = tessera.quantize_fp8(torch.randn(n, k, device="cuda", dtype=torch.bfloat16, generator=gen)
                                          / k ** 0.5, "128x128")
        w[e] = q[e].float() * s[e].repeat_interleave(128, 0)[:n].repeat_interleave(128, 1)[:, :k]
    return q, s, w.transpose(1, 2)


def run_case(name):
    groups, per_group, k, width = CASES[name]
    tokens = groups * per_group
    gen = torch.Generator(device="cuda").manual_seed(0)
    offs = torch.arange(1, groups + 1, device="cuda", dtype=torch.int32) * per_group
    x = torch.randn(tokens, k, device="cuda", dtype=torch.bfloat16, generator=gen)
    qx, sx = tessera.quantize_fp8(x, "1x128")
    qgu, sgu, wgu = quantized_weights(groups, 2 * width, k, gen)  # rows 2j, 2j + 1: gate j, up j
    qdn, sdn, wdn = quantized_weights(groups, k, width, gen)
    gu = torch.empty(tokens, 2 * width, device="cuda", dtype=torch.bfloat16)
    h = torch.empty(tokens, width, device="cuda", dtype=torch.bfloat16)
    y = torch.empty(tokens, k, device="cuda", dtype=torch.bfloat16)
    xd = qx.float().mul(sx.repeat_interleave(128, 1)[:, :k]).to(torch.bfloat16)  # x as the FP8 paths see it

    def down(hidden):
        qh, sh = tessera.quantize_fp8(hidden, "1x128")
        return tessera.grouped_mm(qh, qdn, offs, y, scale_x=sh, scale_w=sdn)

    def fused():
        tessera.grouped_mm(qx, qgu, offs, h, scale_x=sx, scale_w=sgu, activation="silu", gate="interleaved")
        return down(h)

    def unfused():
        tessera.grouped_mm(qx, qgu, offs, gu, scale_x=sx, scale_w=sgu)
        return down(F.silu(gu[:, 0::2]) * gu[:, 1::2])

    def torch_bf16():
        v = torch._grouped_mm(xd, wgu, offs=offs)
        return torch._grouped_mm(F.silu(v[:, 0::2]) * v[:, 1::2], wdn, offs=offs)

    def rel(a, b):
        return ((a.float() - b.float()).norm() / b.float().norm()).item()

    want = torch_bf16().clone()
    got_unfused = unfused().clone()
    got_fused = fused().clone()
    err_fused, err_unfused, err_pair = rel(got_fused, want), rel(got_unfused, want), rel(got_fused, got_unfused)
    ok = err_fused < 0.08 and err_pair < 0.03  # FP8 (e4m3) against bf16; fused against unfused
    t = {f.__name__: timed(f) for f in (fused, unfused, torch_bf16)}
    print(f"{name}: G={groups} x {per_group} tokens, K={k}, expert width {width}: fused {t['fused']:.4f} ms, "
          f"unfused {t['unfused']:.4f} ({t['unfused'] / t['fused']:.2f}x), torch bf16 {t['torch_bf16']:.4f} "
          f"({t['torch_bf16'] / t['fused']:.2f}x); rel err fused {err_fused:.3g}, unfused {err_unfused:.3g}, "
          f"fused-unfused {err_pair:.3g}{'' if ok else '  CHECK FAILED'}")
    return (f"{name},{groups},{per_group},{k},{width},{t['fused']:.4f},{t['unfused']:.4f},{t['torch_bf16']:.4f},"
            f"{err_fused:.3g},{err_pair:.3g},{int(ok)}"), ok


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", default="prefill,decode", help="comma-separated: " + ", ".join(CASES))
    ap.add_argument("--csv", help="write one row per case here")
    args = ap.parse_args()
    names = args.cases.split(",")
    unknown = [n for n in names if n not in CASES]
    if unknown:
        ap.error(f"unknown case(s) {unknown}; known: {', '.join(CASES)}")
    if not hasattr(torch, "_grouped_mm"):
        ap.error("this torch has no torch._grouped_mm (the bf16 peer)")
    print(f"device: {torch.cuda.get_device_name()}, torch {torch.__version__}")
    rows, failed = ["case,groups,tokens_per_group,k,width,fused_ms,unfused_ms,torch_bf16_ms,rel_err_fused,"
                    "rel_err_fused_unfused,ok"], 0
    for name in names:
        row, ok = run_case(name)
        rows.append(row)
        failed += not ok
    if args.csv:
        with open(args.csv, "w") as f:
            f.write(f"# {torch.cuda.get_device_name()}, torch {torch.__version__}, tessera {tessera.__version__}\n")
            f.write("\n".join(rows) + "\n")
    raise SystemExit(1 if failed else 0)


if __name__ == "__main__":
    main()
