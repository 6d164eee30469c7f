#!/usr/bin/env python3
"""4-bit weights (W4A16) beside PyTorch's tinygemm and tessera's bf16 GEMMs, in one process on one GPU.

    python3 bench/w4a16.py --csv bench/results/h100-w4a16.csv
    python3 bench/w4a16.py --quick
    python3 bench/w4a16.py --decode

Per weight (N x K: the small-M suite's decode shapes and two larger ones) and M (1, 4, 16 tokens,
and 4096 for prefill), with groups of 128, bf16 scales and uint8 zero points (AWQ-style):
  tessera w4a16    tessera.w4a16_gemm (the decode GEMV for M <= 16; dequantize + gemm above)
  torch tinygemm   torch._weight_int4pack_mm on the same codes, scales and zero points (its zero
                   a float offset: (q - 8) s + (8 - z) s = (q - z) s)
  tessera bf16     tessera.gemm with the dequantized weight in bf16 (what 4 bits save)
  copy             a device-to-device copy of the 4-bit weight's bytes (the decode rows' yardstick)
Each product is checked against float64 of the same dequantized weight first (a FAIL row makes the
script exit 1). The decode rows read their weights from several copies in turn, together past twice
the L2, so each call streams its weight from memory as a model's layers do. Timing as
bench/quantized.py (CUDA events behind a sleep kernel, medians of rounds, NVML clock and power); bursts.
"""
import itertools
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, os.pardir, "python"))  # the repository's package, unless installed

import torch  # noqa: E402

import energy  # noqa: E402
import tessera  # noqa: E402
from grouped import bench_parser, bench_timer, write_csv  # noqa: E402
from training import rel, timed  # noqa: E402

WEIGHTS = [(4096, 7168), (7168, 2048), (2112, 7168), (7168, 7168), (28672, 4096)]
TOKENS = [1, 4, 16, 4096]
GROUP = 128
ROTATE_BYTES = 120 << 20  # weight copies taken in turn: past twice the H100's 50 MB of L2
COLUMNS = ["n", "k", "m", "provider", "us", "weight_gbs", "vs_copy", "vs_tinygemm", "vs_bf16", "tflops", "rel_error",
           "sm_mhz", "board_w", "tflops_per_ghz", "tflop_per_j", "note"]
COLUMN_DOC = """# columns: provider as bench/w4a16.py says; us = median time; weight_gbs = the provider's weight bytes
# read per second (4-bit: N K / 2 plus scales and zeros, tinygemm's (scale, offset) pairs; bf16: 2 N K; copy:
# bytes read + written);
# vs_copy = weight_gbs / the copy row's (decode rows); vs_tinygemm, vs_bf16 = their time / this row's (> 1:
# faster); tflops = 2 M N K / time; rel_error against float64 of the same dequantized weight; sm_mhz, board_w,
# tflops_per_ghz, tflop_per_j as bench/grouped.py
"""


def rotation(nbytes):
    """Copies of a weight of nbytes to take in turn (1 where one copy already passes ROTATE_BYTES)."""
    return max(1, -(-ROTATE_BYTES // max(nbytes, 1)))


def providers(n, k, m, g):
    """{name: fn}, {name: weight bytes a call reads}, and the float64 reference."""
    codes = torch.randint(0, 16, (n, k), generator=g, device="cuda", dtype=torch.int32)
    scales = (0.004 + 0.03 * torch.rand(k // GROUP, n, generator=g, device="cuda")).to(torch.bfloat16)
    zeros = torch.randint(0, 16, (k // GROUP, n), generator=g, device="cuda").to(torch.uint8)
    x = torch.randn(m, k, generator=g, device="cuda").to(torch.bfloat16)
    words = (codes.reshape(n, k // 8, 8).to(torch.int64) << (4 * torch.arange(8, device="cuda"))).sum(-1)
    packed = tessera.pack_int4((words - ((words >> 31) << 32)).to(torch.int32), "rows")
    weight = tessera.dequantize_int4(packed, scales, zeros)  # n x k bf16, as the kernels round it
    want = x.double() @ weight.double().t()
    # tinygemm: two codes a byte (even k in the high nibble), its own tiling, (scale, offset) pairs
    tg_w = torch._convert_weight_to_int4pack((codes[:, ::2] << 4 | codes[:, 1::2]).to(torch.uint8), 8)
    offset = ((8.0 - zeros.float()) * scales.float()).to(torch.bfloat16)
    tg_sz = torch.stack([scales, offset], dim=-1).contiguous()
    int4_bytes = n * k // 2 + scales.numel() * 2 + zeros.numel()
    decode = m <= 16
    r4 = rotation(int4_bytes) if decode else 1
    mine = [(packed.clone(), scales.clone(), zeros.clone()) for _ in range(r4)]
    theirs = [(tg_w.clone(), tg_sz.clone()) for _ in range(r4)]
    bf16 = [weight.clone() for _ in range(rotation(2 * n * k) if decode else 1)]
    src = [packed.clone() for _ in range(r4)]
    dst = torch.empty_like(packed)
    turn = {name: itertools.cycle(copies) for name, copies in
            (("t", mine), ("g", theirs), ("b", bf16), ("c", src))}
    def tinygemm():
        w, sz = next(turn["g"])
        return torch._weight_int4pack_mm(x, w, GROUP, sz)

    fns = {"tessera w4a16": lambda: tessera.w4a16_gemm(x, *next(turn["t"])), "torch tinygemm": tinygemm,
           "tessera bf16": lambda: tessera.gemm(x, next(turn["b"]).t())}
    tinygemm_bytes = n * k // 2 + (k // GROUP) * n * 4  # its (scale, offset) pairs: 4 bytes a group row
    nbytes = {"tessera w4a16": int4_bytes, "torch tinygemm": tinygemm_bytes, "tessera bf16": 2 * n * k}
    if decode:
        fns["copy"] = lambda: dst.copy_(next(turn["c"]))
        nbytes["copy"] = 2 * (n * k // 2)
    return fns, nbytes, want


def main():
    ap = bench_parser(__doc__, reps=30, warmup=5, rounds=3)
    ap.add_argument("--quick", action="store_true", help="one weight, M = 1 and 16")
    ap.add_argument("--decode", action="store_true", help="M <= 16 only (no prefill rows)")
    args = ap.parse_args()
    timer, device = bench_timer(args)
    g = torch.Generator(device="cuda").manual_seed(0)
    rows, failed = [], False
    for (n, k), m in itertools.product(WEIGHTS[:1] if args.quick else WEIGHTS, [1, 16] if args.quick else
                                  [m for m in TOKENS if m <= 16] if args.decode else TOKENS):
        fns, nbytes, want = providers(n, k, m, g)
        errors = {name: rel(fn(), want) for name, fn in fns.items() if name != "copy"}
        result = timed(timer, fns, args.rounds)
        ms = {name: t for name, (t, _) in result.items()}
        copy_gbs = nbytes["copy"] / ms["copy"] / 1e6 if "copy" in ms else None
        for name, (t, window) in result.items():
            gbs = nbytes[name] / t / 1e6
            tflops = 2.0 * m * n * k / t / 1e9 if name != "copy" else float("nan")
            error = errors.get(name, float("nan"))
            bad = error > 1e-2  # the bf16 output's rounding, well inside; the weights are the same
            failed |= bad
            rows.append({"n": n, "k": k, "m": m, "provider": name, "us": f"{t * 1e3:.2f}", "weight_gbs": f"{gbs:.0f}",
                         "vs_copy": f"{gbs / copy_gbs:.3f}" if copy_gbs and name != "copy" else "",
                         "vs_tinygemm": f"{ms['torch tinygemm'] / t:.3f}" if name != "copy" else "",
                         "vs_bf16": f"{ms['tessera bf16'] / t:.3f}" if name != "copy" else "",
                         "tflops": f"{tflops:.1f}", "rel_error": f"{error:.2e}", "sm_mhz": f"{window.sm_mhz:.0f}",
                         "board_w": f"{window.board_w:.1f}",
                         "tflops_per_ghz": f"{energy.per_ghz(tflops, window):.1f}" if name != "copy" else "",
                         "tflop_per_j": f"{energy.per_joule(tflops, window):.2f}" if name != "copy" else "",
                         "note": "FAIL" if bad else ""})
            r = rows[-1]
            print(f"{n:>6}x{k:>5} m={m:<5} {name:15} {r['us']:>9} us {r['weight_gbs']:>6} GB/s copy {r['vs_copy']:>6} "
                  f"tinygemm {r['vs_tinygemm']:>6}x bf16 {r['vs_bf16']:>6}x {r['rel_error']} {r['note']}", flush=True)
        write_csv(args.csv, device, rows, COLUMNS, COLUMN_DOC)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
