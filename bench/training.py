#!/usr/bin/env python3
"""Training benchmark: what a linear layer's backward pass costs on tessera
beside PyTorch (cuBLAS / cuBLASLt), in one process, on one GPU.

    python3 bench/training.py --csv bench/results/h100-training.csv
    python3 bench/training.py --quick

Parts (each row names its part):
  cast     the cast-transpose (tessera.quantize_fp8_transposed: bf16 x in,
           e4m3 x and x^T with 1x128 factors out, one read) against the
           device copy rate (read + write bytes / time, a 1 GiB torch copy_),
           and against the two passes it replaces (quantize_fp8 of x and of
           x.T made contiguous by torch).
  bf16     a layer's dgrad (dX = dY W: NN) and wgrad (dW = dY^T X: TN of
           transposed views) as tessera.gemm and torch.matmul on the same
           views.
  fp8      the same layer as tessera.fp8_linear (forward + backward, three
           FP8 GEMMs with DeepSeek-V3's block factors and the quantizations)
           against torch's bf16 linear forward + backward (cuBLAS), per step.
Every provider is checked first: relative Frobenius error against a float32
(bf16 parts) or float64 (fp8 step, a loose FP8 bound) reference; a FAIL row
makes the script exit 1 at the end. Timing as bench/grouped.py: CUDA events,
a sleep kernel queued first so that host time is not timed, the median of
--reps runs per round and of --rounds rounds (providers alternating); the
mean SM clock and board power of the timed runs (NVML) give TF/s per GHz and
TF/J. Bursts by default; --hold SECONDS measures each provider held at the
board's power cap instead (as bench/grouped.py --hold).
"""
import os
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, os.pardir, "python"))  # the repository's package, unless installed

import torch  # noqa: E402

import energy  # noqa: E402  (bench/energy.py, beside this script)
import tessera  # noqa: E402
from grouped import (HOLD_ROUNDS, Timer, bench_parser, copy_rate, hold_seconds, pci_bus_id, time_held,  # noqa: E402
                     write_csv)  # (bench/grouped.py's)

# (tokens, Din, Dout): DeepSeek-V3's dense projections and a Llama-3-8B MLP, at 4096 and 16384 tokens.
LAYERS = [(4096, 7168, 2112), (4096, 7168, 4096), (4096, 2048, 7168), (4096, 4096, 14336), (16384, 7168, 4096),
          (8192, 8192, 8192)]
QUICK_LAYERS = [(4096, 7168, 4096)]
# (rows, cols) of the cast-transpose's input: activations and gradients of the layers above.
CASTS = [(4096, 7168), (4096, 2048), (16384, 7168), (16384, 4096), (8192, 8192), (32768, 2048)]
QUICK_CASTS = [(16384, 7168)]
COLUMNS = ["part", "shape", "provider", "ms", "tflops", "gbs", "vs_copy", "vs_torch", "rel_error", "sm_mhz",
           "board_w", "tflops_per_ghz", "tflop_per_j", "note"]
COLUMN_DOC = """# columns: part = cast|bf16|fp8 (see bench/training.py); shape = rows x cols (cast) or
# tokens x Din x Dout (a layer: Y = X W^T, X tokens x Din, W Dout x Din); provider = what ran; ms = median
# time; tflops = the GEMM flops / time (cast: empty); gbs = bytes read + written / time (cast only;
# GB = 1e9 B); vs_copy = gbs / the device copy rate (read + write); vs_torch = the torch row's time / this
# row's time (> 1: faster); rel_error = relative Frobenius error against the reference; sm_mhz, board_w =
# mean SM clock and board power during the timed runs (NVML; nan without it); tflops_per_ghz =
# tflops / (sm_mhz / 1000); tflop_per_j = tflops / board_w
"""
BF16_BOUND = 1e-2  # bf16 outputs of K-long sums: ~2e-3 from rounding
FP8_BOUND = 0.08   # e4m3 operands (3 mantissa bits) on both sides of each GEMM: ~4% typical


def rel(got, want):
    got, want = got.double(), want.double()
    return ((got - want).norm() / want.norm()).item()


def row(part, shape, provider, ms, window, flops=None, nbytes=None, copy_gbs=None, error=float("nan"), note=""):
    tflops = flops / ms / 1e9 if flops else float("nan")
    gbs = nbytes / ms / 1e6 if nbytes else float("nan")
    return {"part": part, "shape": "x".join(str(s) for s in shape), "provider": provider, "ms": f"{ms:.4f}",
            "tflops": f"{tflops:.1f}" if flops else "", "gbs": f"{gbs:.1f}" if nbytes else "",
            "vs_copy": f"{gbs / copy_gbs:.3f}" if nbytes and copy_gbs else "", "vs_torch": "",
            "rel_error": f"{error:.2e}", "sm_mhz": f"{window.sm_mhz:.0f}", "board_w": f"{window.board_w:.1f}",
            "tflops_per_ghz": f"{energy.per_ghz(tflops, window):.1f}" if flops else "",
            "tflop_per_j": f"{energy.per_joule(tflops, window):.2f}" if flops else "", "note": note}


def timed(timer, providers, rounds):
    """{name: (median ms over rounds, last window)} for providers {name: fn}, their order alternating;
    timer(fn) -> (ms, energy window): bursts (grouped.Timer) or held at the cap (held_timer)."""
    times, windows = {n: [] for n in providers}, {}
    names = list(providers)
    for r in range(rounds):
        for n in (names if r % 2 == 0 else names[::-1]):
            ms, windows[n] = timer(providers[n])
            times[n].append(ms)
    return {n: (statistics.median(times[n]), windows[n]) for n in names}


def held_timer(seconds, meter):
    """A timer for `timed` that runs each provider back to back for `seconds` at the board's power cap
    (grouped.time_held: after 1 s untimed)."""
    def measure(fn):
        ms, _, window = time_held(fn, seconds, meter)
        return ms, window
    return measure


def set_vs_torch(rows, torch_name):
    base = next(float(r["ms"]) for r in rows if r["provider"] == torch_name)
    for r in rows:
        r["vs_torch"] = f"{base / float(r['ms']):.3f}"


def cast_part(shape, timer, rounds, copy_gbs):
    rows_, cols = shape
    x = torch.randn(rows_, cols, device="cuda", dtype=torch.bfloat16)
    q, s, qt, st = tessera.quantize_fp8_transposed(x)
    want_q, want_s = tessera.quantize_fp8(x, "1x128")
    want_qt, want_st = tessera.quantize_fp8(x.T.contiguous(), "1x128")
    exact = (torch.equal(q.view(torch.uint8), want_q.view(torch.uint8)) and torch.equal(s, want_s)
             and torch.equal(qt.view(torch.uint8), want_qt.view(torch.uint8)) and torch.equal(st, want_st))
    providers = {
        "tessera cast-transpose": lambda: tessera.quantize_fp8_transposed(x),
        "tessera quantize x, torch x.T copy, quantize x.T": lambda: (tessera.quantize_fp8(x, "1x128"),
                                                                     tessera.quantize_fp8(x.T.contiguous(), "1x128")),
    }
    result = timed(timer, providers, rounds)
    kblocks = (cols + 127) // 128 * rows_ + (rows_ + 127) // 128 * cols
    one_pass = 2 * rows_ * cols + 2 * rows_ * cols + 4 * kblocks  # x read, q and qt written, factors
    two_pass = one_pass + 3 * (2 * rows_ * cols)  # + the bf16 transpose's read and write, x.T read again
    out = [row("cast", shape, n, ms, w, nbytes=one_pass if n.startswith("tessera cast") else two_pass,
               copy_gbs=copy_gbs, error=0.0 if exact else 1.0, note="" if exact else "FAIL: not bit-exact")
           for n, (ms, w) in result.items()]
    return out, not exact


def bf16_part(layer, timer, rounds):
    tokens, din, dout = layer
    g = torch.Generator(device="cuda").manual_seed(tokens + din + dout)
    x = torch.randn(tokens, din, device="cuda", dtype=torch.bfloat16, generator=g)
    w = torch.randn(dout, din, device="cuda", dtype=torch.bfloat16, generator=g) / din ** 0.5
    dy = torch.randn(tokens, dout, device="cuda", dtype=torch.bfloat16, generator=g)
    rows, failed = [], False
    for what, a, b in (("dgrad dY W (NN)", dy, w), ("wgrad dY^T X (TN views)", dy.T, x)):
        want = a.float() @ b.float()
        providers = {f"tessera {what}": lambda a=a, b=b: tessera.gemm(a, b),
                     f"torch {what}": lambda a=a, b=b: torch.matmul(a, b)}
        errors = {n: rel(fn(), want) for n, fn in providers.items()}
        flops = 2.0 * a.shape[0] * a.shape[1] * b.shape[1]
        part = [row("bf16", layer, n, ms, wdw, flops=flops, error=errors[n],
                    note="FAIL" if errors[n] > BF16_BOUND else "")
                for n, (ms, wdw) in timed(timer, providers, rounds).items()]
        set_vs_torch(part, f"torch {what}")
        failed |= any(errors[n] > BF16_BOUND for n in errors)
        rows += part
    return rows, failed


def fp8_part(layer, timer, rounds):
    tokens, din, dout = layer
    g = torch.Generator(device="cuda").manual_seed(tokens + din + dout)
    x = torch.randn(tokens, din, device="cuda", dtype=torch.bfloat16, generator=g).requires_grad_()
    w = (torch.randn(dout, din, device="cuda", generator=g) / din ** 0.5).to(torch.bfloat16).requires_grad_()
    dy = torch.randn(tokens, dout, device="cuda", dtype=torch.bfloat16, generator=g)

    def step(linear):
        def run():
            x.grad = w.grad = None
            linear(x, w).backward(dy)
        return run

    providers = {"tessera fp8_linear step": step(tessera.fp8_linear),
                 "torch bf16 linear step": step(torch.nn.functional.linear)}
    x64, w64, dy64 = x.detach().double(), w.detach().double(), dy.double()
    want = (x64 @ w64.T, dy64 @ w64, dy64.T @ x64)
    errors = {}
    for n, fn in providers.items():
        fn()
        y = (tessera.fp8_linear if n.startswith("tessera") else torch.nn.functional.linear)(x, w)
        errors[n] = max(rel(y, want[0]), rel(x.grad, want[1]), rel(w.grad, want[2]))
    flops = 3 * 2.0 * tokens * din * dout
    rows = [row("fp8", layer, n, ms, wdw, flops=flops, error=errors[n],
                note="FAIL" if errors[n] > FP8_BOUND else "")
            for n, (ms, wdw) in timed(timer, providers, rounds).items()]
    set_vs_torch(rows, "torch bf16 linear step")
    return rows + fp8_step_parts(layer, x.detach(), w.detach(), dy, timer, rounds), \
        any(e > FP8_BOUND for e in errors.values())


def fp8_step_parts(layer, x, w, dy, timer, rounds):
    """Each piece of tessera's FP8 step alone (the step's own calls, on its data): where its time goes."""
    tokens, din, dout = layer
    xq, xs, xqt, xst = tessera.quantize_fp8_transposed(x)
    wq, ws, wqt, wst = tessera.quantize_fp8_transposed(w, "128x128")
    dyq, dys, dyqt, dyst = tessera.quantize_fp8_transposed(dy)
    gemm_flops = 2.0 * tokens * din * dout
    parts = {
        "  cast-transpose x": (lambda: tessera.quantize_fp8_transposed(x), None),
        "  cast-transpose w 128x128": (lambda: tessera.quantize_fp8_transposed(w, "128x128"), None),
        "  forward GEMM (1x128 x 128x128)": (lambda: tessera.gemm(xq, wq.T, scale_a=xs, scale_b=ws,
                                                                  scale_recipe_a="1x128",
                                                                  scale_recipe_b="128x128"), gemm_flops),
        "  cast-transpose dy": (lambda: tessera.quantize_fp8_transposed(dy), None),
        "  dgrad GEMM (1x128 x 128x128)": (lambda: tessera.gemm(dyq, wqt.T, scale_a=dys, scale_b=wst,
                                                                scale_recipe_a="1x128",
                                                                scale_recipe_b="128x128"), gemm_flops),
        "  wgrad GEMM (1x128 x 1x128)": (lambda: tessera.gemm(dyqt, xqt.T, scale_a=dyst, scale_b=xst,
                                                              scale_recipe_a="1x128", scale_recipe_b="1x128"),
                                         gemm_flops),
    }
    result = timed(timer, {n: fn for n, (fn, _) in parts.items()}, rounds)
    return [row("fp8", layer, n, ms, wdw, flops=parts[n][1]) for n, (ms, wdw) in result.items()]


def main():
    ap = bench_parser(__doc__, reps=20, warmup=3, rounds=2)
    ap.add_argument("--parts", default="cast,bf16,fp8", help="comma-separated: cast, bf16, fp8")
    ap.add_argument("--quick", action="store_true", help="one shape per part")
    ap.add_argument("--hold", type=hold_seconds, default=0.0, metavar="SECONDS",
                    help=f"held at the power cap: each provider SECONDS back to back (after 1 s untimed), "
                    f"{HOLD_ROUNDS} rounds in alternating order, the median reported (--reps, --warmup do not apply)")
    args = ap.parse_args()
    dev = torch.cuda.current_device()
    with tessera.Handle(dev) as h:
        info = h.device_info()
    meter = energy.Meter(pci_bus_id(dev))
    if not meter.available:
        print(f"energy: {meter.why}: the MHz, W, per-GHz and per-J columns are nan")
    timer = held_timer(args.hold, meter) if args.hold else Timer(info.sm_clock_khz, args.warmup, args.reps, meter)
    if args.hold:
        args.rounds = HOLD_ROUNDS
    copy_gbs, _ = copy_rate()
    device = (f"device={info.name} sm_clock_mhz={info.sm_clock_khz // 1000} sms={info.sm_count} "
              f"power_limit_w={meter.power_limit_w():.0f} library={tessera.version_string()} "
              f"torch={torch.__version__} copy_gbs={copy_gbs:.1f} (read + write) hold_s={args.hold:g}")
    print(device)
    parts = args.parts.split(",")
    rows, failed = [], False
    work = ([("cast", s) for s in (QUICK_CASTS if args.quick else CASTS)] +
            [(p, layer) for layer in (QUICK_LAYERS if args.quick else LAYERS) for p in ("bf16", "fp8")])
    for part, shape in work:
        if part not in parts:
            continue
        if part == "cast":
            out, bad = cast_part(shape, timer, args.rounds, copy_gbs)
        elif part == "bf16":
            out, bad = bf16_part(shape, timer, args.rounds)
        else:
            out, bad = fp8_part(shape, timer, args.rounds)
        failed |= bad
        rows += out
        for r in out:
            print(f"{r['part']:5} {r['shape']:>16} {r['provider']:52} {r['ms']:>9} ms {r['tflops']:>7} TF/s "
                  f"{r['gbs']:>7} GB/s {r['vs_copy']:>6} {r['vs_torch']:>6} {r['sm_mhz']:>5} MHz "
                  f"{r['board_w']:>6} W {r['note']}", flush=True)
        write_csv(args.csv, device, rows, COLUMNS, COLUMN_DOC)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
