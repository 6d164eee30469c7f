#!/usr/bin/env python3
"""TF32 and INT8 (W8A8) GEMMs beside PyTorch in one process, on one GPU.

    python3 bench/quantized.py --csv bench/results/h100-quantized.csv
    python3 bench/quantized.py --quick
    python3 bench/quantized.py --kinds int8 --shapes 32x7168x2048,64x4096x7168

Per shape (M N K, the dense suite's large ones):
  tf32   tessera.gemm(a, b, allow_tf32=True) against torch.matmul with
         torch.backends.cuda.matmul.allow_tf32 = True (cuBLAS TF32), f32 A
         row-major, B column-major (w.T), f32 D;
  int8   tessera.gemm(qa, qw.T, scale_a=per-token, scale_b=per-channel) with a
         bf16 D, against torch._int_mm(qa, qw.T) (cuBLASLt int8, int32 D) and
         the same scaling in torch (the unfused W8A8 a user would write).
Each provider is checked first against float64 (TF32: 2^-9 relative; INT8:
the int32 sums exactly, then the scaling within bf16's rounding); a FAIL row
makes the script exit 1. Timing as bench/grouped.py (CUDA events behind a
sleep kernel, medians of rounds, NVML clock and power: TF/s per GHz, TF/J);
bursts.
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

SHAPES = [(8192, 8192, 8192), (4096, 4096, 4096), (8192, 8192, 1024), (4096, 14336, 4096), (6144, 4096, 4096),
          (2048, 2048, 2048)]
COLUMNS = ["kind", "m", "n", "k", "provider", "ms", "tflops", "vs_torch", "rel_error", "sm_mhz", "board_w",
           "tflops_per_ghz", "tflop_per_j", "note"]
COLUMN_DOC = """# columns: kind = tf32|int8; provider = what ran (see bench/quantized.py); ms = median time;
# tflops = 2 M N K / time (TOPS for int8); vs_torch = torch's time / this row's (> 1: faster);
# rel_error = relative Frobenius error against float64; sm_mhz, board_w = mean SM clock and board power
# during the timed runs (NVML); tflops_per_ghz, tflop_per_j as bench/grouped.py
"""
BOUNDS = {"tf32": 2 ** -9, "int8": 2 ** -8}


def tf32_providers(m, n, k):
    a = torch.randn(m, k, device="cuda")
    w = torch.randn(n, k, device="cuda")
    want = a.double() @ w.double().T

    def torch_tf32():
        torch.backends.cuda.matmul.allow_tf32 = True
        try:
            return torch.matmul(a, w.T)
        finally:
            torch.backends.cuda.matmul.allow_tf32 = False

    return {"tessera tf32": lambda: tessera.gemm(a, w.T, allow_tf32=True), "torch tf32": torch_tf32}, want


def int8_providers(m, n, k):
    qa = torch.randint(-127, 128, (m, k), dtype=torch.int8, device="cuda")
    qw = torch.randint(-127, 128, (n, k), dtype=torch.int8, device="cuda")
    sa = torch.rand(m, 1, device="cuda") / 64 + 1e-3
    sw = torch.rand(n, 1, device="cuda") / 64 + 1e-3
    want = (qa.double() @ qw.double().T) * sa.double() * sw.double().T

    def torch_w8a8():
        return (torch._int_mm(qa, qw.T).float() * sa * sw.T).to(torch.bfloat16)

    return {"tessera int8 (scaled, bf16 D)": lambda: tessera.gemm(qa, qw.T, scale_a=sa, scale_b=sw),
            "torch _int_mm + scaling": torch_w8a8}, want


def row(kind, shape, provider, ms, window, error, torch_ms):
    m, n, k = shape
    tflops = 2.0 * m * n * k / ms / 1e9
    bad = error > BOUNDS[kind]
    return {"kind": kind, "m": m, "n": n, "k": k, "provider": provider, "ms": f"{ms:.4f}", "tflops": f"{tflops:.1f}",
            "vs_torch": f"{torch_ms / ms:.3f}", "rel_error": f"{error:.2e}", "sm_mhz": f"{window.sm_mhz:.0f}",
            "board_w": f"{window.board_w:.1f}", "tflops_per_ghz": f"{energy.per_ghz(tflops, window):.1f}",
            "tflop_per_j": f"{energy.per_joule(tflops, window):.2f}", "note": "FAIL" if bad else ""}, bad


def main():
    ap = bench_parser(__doc__, reps=20, warmup=3, rounds=2)
    ap.add_argument("--kinds", default="tf32,int8")
    ap.add_argument("--quick", action="store_true", help="one shape")
    ap.add_argument("--shapes", help="MxNxK,... instead of the default shapes (decode: 32x7168x2048; "
                    "torch._int_mm needs M > 16)")
    args = ap.parse_args()
    timer, device = bench_timer(args)
    rows, failed = [], False
    shapes = [tuple(int(v) for v in s.split("x")) for s in args.shapes.split(",")] if args.shapes else SHAPES
    for shape in shapes[:1] if args.quick else shapes:
        for kind in args.kinds.split(","):
            providers, want = (tf32_providers if kind == "tf32" else int8_providers)(*shape)
            errors = {name: rel(fn(), want) for name, fn in providers.items()}
            result = timed(timer, providers, args.rounds)
            torch_ms = next(ms for name, (ms, _) in result.items() if name.startswith("torch"))
            for name, (ms, window) in result.items():
                r, bad = row(kind, shape, name, ms, window, errors[name], torch_ms)
                failed |= bad
                rows.append(r)
                print(f"{kind:5} {shape[0]:>6}x{shape[1]:>6}x{shape[2]:>6} {name:32} {r['ms']:>9} ms "
                      f"{r['tflops']:>8} TF/s {r['vs_torch']:>6}x {r['rel_error']} {r['sm_mhz']} MHz {r['note']}",
                      flush=True)
            write_csv(args.csv, device, rows, COLUMNS, COLUMN_DOC)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
