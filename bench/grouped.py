#!/usr/bin/env python3
"""Grouped GEMM (Mixture-of-Experts) benchmark: tessera.grouped_mm against
PyTorch's grouped GEMMs on the same inputs, in one process, on one GPU.

    python3 bench/grouped.py --suite bench/suites/moe.txt --csv bench/results/h100-moe.csv
    python3 bench/grouped.py --quick                       # 3 cases, a smoke run
    python3 bench/grouped.py --filter "4096 7168 64" --dtype fp8 --order band

Per case (N K G tokens split, see bench/suites/moe.txt): x [total_M, K]
(tokens sorted by expert), w [G, N, K] (K contiguous), offs int32 [G].
  bf16: tessera.grouped_mm vs torch._grouped_mm(x, w.transpose(-2, -1), offs=offs)
  fp8 (e4m3, bf16 out): tessera with DeepSeek-V3 block factors (x 1x128,
        w 128x128), with one factor per expert ("group": x and w per-tensor
        per group), and with per-row/per-column factors ("rowwise"), vs
        torch._scaled_grouped_mm with rowwise factors (scale_a [total_M],
        scale_b [G, N]); all on the same e4m3 data.
Each provider is first checked against a float32 reference of the
dequantized inputs, group by group (up to --check-groups of the non-empty
groups, the smallest and the largest among them): relative Frobenius error
above 1e-2 is reported as FAIL and the script exits 1 at the end.
Timing: CUDA events around each run; a sleep kernel queued first lets the
host queue every timed run before the GPU reaches it, so host overhead is
not timed; --rounds rounds of --warmup + --reps runs, the providers' order
alternating between rounds; a round's median, and the median of rounds, is
reported. No cache flush: every case's weights (>= 117 MB) exceed the L2
(50-60 MB), so they stream from memory anyway.
Energy: the mean SM clock and board power during each provider's timed runs
(NVML through bench/energy.py; NaN without it), with TF/s per GHz and TF/J
(TF/s / W); burst power is an average over the provider's timed loops (every
round's, the sleep that covers queueing included).
--hold SECONDS (at most 60) measures at the board's power cap instead, as
../shared/peers/sustained.py does: per case, each provider runs back to back
1 s untimed, then SECONDS between two CUDA events (the host waiting every 50
calls for the call 50 before, so the queue stays bounded and never drains),
in two rounds, the second in reverse order; a row gives round 2 (by then the
board is at its cap for every provider) and the best round's TF/s.
The device-to-device copy rate (a 1 GiB torch copy_, median of 20) is
measured in the same run and counted as bytes read + bytes written
(2 x 1 GiB / time), the convention of `tessera bench copy`; the one-way
figure (1 GiB / time) is printed too.
"""
import argparse
import csv
import itertools
import math
import os
import random
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, os.pardir, "python"))  # the repository's package, unless installed

import torch  # noqa: E402

import energy  # noqa: E402  (bench/energy.py, beside this script)
import tessera  # noqa: E402

QUICK = ["4096 7168 8 128 uniform", "7168 2048 32 256 skewed", "4096 7168 64 16 skewed"]
BOUND = 1e-2  # relative Frobenius error allowed per group (bf16 rounding of y is ~2e-3)
ORDERS = {"nfast": tessera.GroupOrder.N_FASTEST, "mfast": tessera.GroupOrder.M_FASTEST,
          "band": tessera.GroupOrder.BANDED}
COLUMNS = ["n", "k", "groups", "tokens_per_group", "split", "total_tokens", "active_experts", "dtype", "provider",
           "recipe", "plan", "ms", "tflops", "weight_gbs", "weight_vs_copy", "vs_torch", "rel_error", "sm_mhz",
           "board_w", "tflops_per_ghz", "tflop_per_j", "best_tflops", "hold_s", "note"]
HOLD_WARM_S = 1.0   # --hold: untimed back-to-back seconds before each timed part
HOLD_SYNC_CALLS = 50  # --hold: the host waits for the call this many back
HOLD_ROUNDS = 2
MAX_HOLD_S = 60.0
COLUMN_DOC = """# columns: n,k = each expert's weight N x K; groups = G; tokens_per_group = the suite's tokens;
# split = uniform|skewed; total_tokens = rows of x; active_experts = experts with >= 1 token;
# dtype = bf16|fp8; provider = tessera|torch; recipe = the scale factors (none, block = x 1x128 with
# w 128x128, group = one per expert, rowwise = per row of x and per column of w); plan = tessera's plan
# name or the torch function; ms = median time; tflops = 2*total_tokens*N*K/time; weight_gbs = bytes of
# the active experts' weights / time (GB = 1e9 B); weight_vs_copy = weight_gbs / the copy rate of the
# device line (read + write); vs_torch = torch's time / this row's time for the same dtype (> 1: faster
# than torch); rel_error = the largest per-group relative Frobenius error vs the float32 reference of
# the dequantized inputs; sm_mhz, board_w = mean SM clock and board power during the provider's timed runs
# (NVML; nan without it); tflops_per_ghz = tflops / (sm_mhz / 1000); tflop_per_j = tflops / board_w;
# best_tflops = the best round's; hold_s = 0: bursts, else --hold (ms, tflops, energy: round 2);
# note = why a row has no time
"""


# ---- cases -------------------------------------------------------------------

def read_suite(path):
    """The suite's cases as (N, K, G, tokens, split) tuples; comma lists expand to every combination."""
    cases = []
    with open(path) as f:
        for number, line in enumerate(f, 1):
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            fields = line.split()
            if len(fields) != 5:
                sys.exit(f"{path}:{number}: expected 'N K G tokens split', got {line!r}")
            lists = [field.split(",") for field in fields]
            for n, k, g, t, split in itertools.product(*lists):
                if split not in ("uniform", "skewed"):
                    sys.exit(f"{path}:{number}: split {split!r}: uniform or skewed")
                cases.append((int(n), int(k), int(g), int(t), split))
    return cases


def group_sizes(groups, tokens, split, seed):
    """Rows per expert: uniform, or Zipf-like (weight 1/(g+1)^1.2) with the smallest quarter of the
    experts emptied into the largest, the sizes dealt to the experts in a seeded shuffled order."""
    total = groups * tokens
    if split == "uniform":
        return [tokens] * groups
    weights = [1.0 / (g + 1) ** 1.2 for g in range(groups)]
    scale = total / sum(weights)
    sizes = [int(w * scale) for w in weights]  # descending
    sizes[0] += total - sum(sizes)             # rounding remainder to the largest
    for g in range(groups - groups // 4, groups):  # the smallest quarter: empty
        sizes[0] += sizes[g]
        sizes[g] = 0
    random.Random(seed * 1000003 + groups * 31 + tokens).shuffle(sizes)
    return sizes


def case_label(case):
    n, k, g, t, split = case
    return f"{n}x{k} G={g} t={t} {split}"


def memory_bytes(case, dtype):
    """Device bytes a case holds at once: x, w, two bf16 outputs (tessera's and torch's), about 2 GB
    of the reference's float32 chunks, and for fp8 the bf16 staging of a chunk of x and one expert."""
    n, k, g, t, _ = case
    rows, reference = g * t, 2e9
    if dtype == "bf16":
        return 2 * (g * n * k + rows * k) + 2 * 2 * rows * n + reference
    return g * n * k + rows * k + 2 * 2 * rows * n + 2 * (min(rows, 65536) * k + n * k) + reference


# ---- measuring ---------------------------------------------------------------

class Timer:
    """Times a callable with CUDA events, the GPU kept busy by a sleep kernel while the host queues; returns
    (median ms, the energy window of the timed runs: from the last one queued to the end)."""

    def __init__(self, sm_clock_khz, warmup, reps, meter):
        self.cycles_per_ms = sm_clock_khz  # kHz = cycles per ms
        self.warmup, self.reps, self.meter = warmup, reps, meter

    def __call__(self, fn):
        t0 = time.perf_counter()
        for _ in range(self.warmup):
            fn()
        host_ms = (time.perf_counter() - t0) * 1e3 / max(self.warmup, 1)  # queueing time per run (upper bound)
        torch.cuda.synchronize()
        events = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
                  for _ in range(self.reps)]
        sleep_ms = min(1.0 + 1.5 * host_ms * self.reps, 500.0)
        torch.cuda._sleep(int(sleep_ms * self.cycles_per_ms))
        for start, end in events:
            start.record()
            fn()
            end.record()
        self.meter.start()  # the sleep still runs: the window holds every timed run and less of the sleep
        torch.cuda.synchronize()
        window = self.meter.stop()
        return statistics.median(s.elapsed_time(e) for s, e in events), window


def run_back_to_back(fn, seconds, marks):
    """Queues fn back to back for `seconds` of host time (at least once); every HOLD_SYNC_CALLS calls records
    one of the two `marks` and waits for the other, recorded that many calls before. Returns the calls."""
    calls, k, end = 0, 0, time.perf_counter() + seconds
    while True:
        fn()
        calls += 1
        if calls % HOLD_SYNC_CALLS == 0:
            marks[k].record()
            k ^= 1
            marks[k].synchronize()
        if time.perf_counter() >= end:
            return calls


def time_held(fn, seconds, meter):
    """(ms per call, calls, energy window) of fn run back to back for `seconds` between two CUDA events,
    after HOLD_WARM_S seconds untimed."""
    marks = [torch.cuda.Event(), torch.cuda.Event()]
    run_back_to_back(fn, HOLD_WARM_S, marks)
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    meter.start()
    start.record()
    calls = run_back_to_back(fn, seconds, marks)
    end.record()
    end.synchronize()
    window = meter.stop()
    return start.elapsed_time(end) / calls, calls, window


def copy_rate():
    """(read + write GB/s, one-way GB/s) of a 1 GiB device-to-device copy, median of 20 after 5 warm-ups."""
    nbytes = 1 << 30
    src = torch.empty(nbytes, dtype=torch.uint8, device="cuda").random_()
    dst = torch.empty_like(src)
    times = []
    for i in range(25):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        dst.copy_(src)
        end.record()
        torch.cuda.synchronize()
        if i >= 5:
            times.append(start.elapsed_time(end))
    ms = statistics.median(times)
    del src, dst
    return 2 * nbytes / ms / 1e6, nbytes / ms / 1e6


def check_groups(sizes, limit):
    """Up to `limit` non-empty groups to check: evenly spread, plus the smallest and the largest."""
    live = [g for g, s in enumerate(sizes) if s]
    if len(live) <= limit:
        return live
    picked = {live[round(i * (len(live) - 1) / max(limit - 3, 1))] for i in range(max(limit - 2, 1))}
    picked.add(min(live, key=lambda g: sizes[g]))
    picked.add(max(live, key=lambda g: sizes[g]))
    return sorted(picked)


def rel_error(y, reference, sizes, groups, chunk=16384):
    """The largest relative Frobenius error of y's rows over the checked groups; reference(g, r0, r1)
    gives float32 reference rows r0 .. r1-1 (of group g), asked for a chunk of rows at a time."""
    starts = [0] + list(itertools.accumulate(sizes))
    worst = 0.0
    for g in groups:
        diff2 = ref2 = 0.0
        for r0 in range(starts[g], starts[g + 1], chunk):
            r1 = min(starts[g + 1], r0 + chunk)
            want, got = reference(g, r0, r1), y[r0:r1].float()
            if not torch.isfinite(got).all():
                return math.inf
            diff2 += (got - want).square().sum().item()
            ref2 += want.square().sum().item()
        worst = max(worst, math.sqrt(diff2 / max(ref2, 1e-30)))
    return worst


# ---- inputs --------------------------------------------------------------------

def dequantized_rows(q, factors, rows_per_factor):
    """q (FP8, rows x K) times its (row block, K block) factors, in float32."""
    f = factors.repeat_interleave(rows_per_factor, 0)[:q.shape[0]]
    return q.float() * f.repeat_interleave(128, 1)[:, :q.shape[1]]


# ---- one case --------------------------------------------------------------------

def pick_plan(x, w, order, **scales):
    """The plan tessera runs: the heuristic's, or the first of the order asked for (nfast, mfast, band), or
    the first whose name holds `order` (e.g. 128x128x64_s6_band), or ends with it where it ends in $
    (e.g. swap_band$: not a mixed plan, whose name ends in _mixR)."""
    plans = tessera.grouped_plans(x, w, **scales)
    if order is None:
        return plans[0]
    def matches(p):
        if order in ORDERS:
            return p.group_order == ORDERS[order]
        return p.name.endswith(order[:-1]) if order.endswith("$") else order in p.name
    chosen = [p for p in plans if matches(p)]
    if not chosen:
        raise RuntimeError(f"no plan matches {order!r}: {[p.name for p in plans]}")
    return chosen[0]


def tessera_provider(recipe, x, w, offs, out, order, **scales):
    """A provider entry for tessera.grouped_mm: (name, recipe, make), make() giving (plan name, run)."""
    def make():
        plan = pick_plan(x, w, order, **scales)
        return plan.name, lambda: tessera.grouped_mm(x, w, offs, out, plan=plan, **scales)
    return "tessera", recipe, make


def bf16_providers(case, gen, offs, total, order):
    """(providers, float32 reference, bytes of one expert's weight) for the bf16 case."""
    n, k, g, t, _ = case
    x = torch.randn(total, k, device="cuda", dtype=torch.bfloat16, generator=gen)
    w = torch.randn(g, n, k, device="cuda", dtype=torch.bfloat16, generator=gen)
    out = torch.empty(total, n, device="cuda", dtype=torch.bfloat16)
    wt = w.transpose(-2, -1)  # [G, K, N], each K x N column-major: the layout torch wants

    def reference(recipe, e, r0, r1):
        return x[r0:r1].float() @ w[e].float().T

    providers = [tessera_provider("none", x, w, offs, out, order),
                 ("torch", "none", lambda: ("torch._grouped_mm", lambda: torch._grouped_mm(x, wt, offs=offs)))]
    return providers, reference, out, n * k * 2


def fp8_providers(case, gen, offs, total, order):
    """The same for e4m3: one set of e4m3 data (quantized by tessera with DeepSeek-V3 block
    factors), run with its block factors, with one factor per expert, and per row / per column."""
    n, k, g, t, _ = case
    kb, nb = -(-k // 128), -(-n // 128)
    qx = torch.empty(total, k, device="cuda", dtype=torch.float8_e4m3fn)
    sx = torch.empty_strided((total, kb), (1, total), device="cuda", dtype=torch.float32)
    for r0 in range(0, total, 65536):  # bf16 staging a chunk at a time
        r1 = min(total, r0 + 65536)
        q, s = tessera.quantize_fp8(torch.randn(r1 - r0, k, device="cuda", dtype=torch.bfloat16, generator=gen),
                                    "1x128")
        qx[r0:r1], sx[r0:r1] = q, s
    qw = torch.empty(g, n, k, device="cuda", dtype=torch.float8_e4m3fn)
    sw = torch.empty(g, nb, kb, device="cuda", dtype=torch.float32)
    for e in range(g):
        q, s = tessera.quantize_fp8(torch.randn(n, k, device="cuda", dtype=torch.bfloat16, generator=gen), "128x128")
        qw[e], sw[e] = q, s
    sxg = torch.rand(g, device="cuda", generator=gen) + 0.5      # one factor per expert, for x and for w
    swg = torch.rand(g, device="cuda", generator=gen) + 0.5
    sxr = torch.rand(total, device="cuda", generator=gen) + 0.5  # per row of x, per column of each expert
    swr = torch.rand(g, n, device="cuda", generator=gen) + 0.5
    out = torch.empty(total, n, device="cuda", dtype=torch.bfloat16)
    wt = qw.transpose(-2, -1)

    def reference(recipe, e, r0, r1):
        if recipe == "block":
            return dequantized_rows(qx[r0:r1], sx[r0:r1], 1) @ dequantized_rows(qw[e], sw[e], 128).T
        if recipe == "group":
            return (sxg[e] * swg[e]) * (qx[r0:r1].float() @ qw[e].float().T)
        return (sxr[r0:r1, None] * qx[r0:r1].float()) @ (swr[e, :, None] * qw[e].float()).T  # rowwise

    providers = [
        tessera_provider("block", qx, qw, offs, out, order, scale_x=sx, scale_w=sw),
        tessera_provider("group", qx, qw, offs, out, order, scale_x=sxg, scale_w=swg),
        tessera_provider("rowwise", qx, qw, offs, out, order, scale_x=sxr, scale_w=swr),
        ("torch", "rowwise", lambda: ("torch._scaled_grouped_mm", lambda: torch._scaled_grouped_mm(
            qx, wt, sxr, swr, offs=offs, out_dtype=torch.bfloat16))),
    ]
    return providers, reference, out, n * k


def run_dtype(case, dtype, sizes, offs, args, timer, copy_gbs, failures):
    """CSV rows of one case in one dtype; its tensors are freed on return."""
    n, k, g, t, split = case
    total, active = sum(sizes), sum(1 for s in sizes if s)
    base = dict(n=n, k=k, groups=g, tokens_per_group=t, split=split, total_tokens=total, active_experts=active,
                dtype=dtype)
    need = memory_bytes(case, dtype)
    if need > args.mem_budget_gb * 1e9:
        note = f"skipped: needs ~{need / 1e9:.0f} GB > --mem-budget-gb {args.mem_budget_gb:g}"
        print(f"  {dtype}: {note}")
        return [dict(base, provider="-", recipe="-", plan="-", note=note)]
    gen = torch.Generator(device="cuda").manual_seed(args.seed)
    make_providers = bf16_providers if dtype == "bf16" else fp8_providers
    providers, reference, out, expert_bytes = make_providers(case, gen, offs, total, args.order)
    checked = check_groups(sizes, args.check_groups)
    # correctness first: each provider's output against the reference of its own factors
    results = {}
    for name, recipe, make in providers:
        try:
            plan_name, fn = make()
            out.fill_(float("nan"))  # rows tessera leaves unwritten show as an error
            y = fn()
            torch.cuda.synchronize()
            err = rel_error(y, lambda e, r0, r1: reference(recipe, e, r0, r1), sizes, checked)
        except Exception as e:  # a provider that cannot run this case: a row with the reason
            torch.cuda.synchronize()  # unless the CUDA context is broken: then this raises, and the run stops
            results[(name, recipe)] = dict(plan="-", note=f"error: {type(e).__name__}: {str(e).splitlines()[0]}")
            print(f"  {dtype} {name}/{recipe}: {results[(name, recipe)]['note']}")
            continue
        results[(name, recipe)] = dict(plan=plan_name, rel_error=f"{err:.3e}", fn=fn)
        if not err <= BOUND:
            failures.append(f"{case_label(case)} {dtype} {name}/{recipe}: relative error {err:.3g} > {BOUND}")
            print(f"  FAIL {failures[-1]}")
    # timing: rounds, the providers' order alternating; bursts (median of each round's runs, the energy of every
    # round's timed runs) or --hold (round 2's time and energy)
    runnable = [key for key, res in results.items() if "fn" in res]
    times = {key: [] for key in runnable}
    windows = {key: energy.EMPTY for key in runnable}
    for r in range(HOLD_ROUNDS if args.hold else args.rounds):
        for key in (runnable if r % 2 == 0 else runnable[::-1]):
            if args.hold:
                ms, _, window = time_held(results[key]["fn"], args.hold, timer.meter)
                windows[key] = window
            else:
                ms, window = timer(results[key]["fn"])
                windows[key] = windows[key].merge(window)
            times[key].append(ms)
    ms_of = {key: ts[-1] if args.hold else statistics.median(ts) for key, ts in times.items()}
    torch_ms = next((ms for (name, _), ms in ms_of.items() if name == "torch"), math.nan)
    rows = []
    for (name, recipe), res in results.items():
        row = dict(base, provider=name, recipe=recipe, plan=res["plan"], rel_error=res.get("rel_error", "nan"),
                   note=res.get("note", ""))
        if (name, recipe) in ms_of:
            ms, w = ms_of[(name, recipe)], windows[(name, recipe)]
            gbs = active * expert_bytes / ms / 1e6
            flop = 2 * total * n * k
            tflops = flop / ms / 1e9
            row.update(ms=f"{ms:.4f}", tflops=f"{tflops:.1f}", weight_gbs=f"{gbs:.0f}",
                       weight_vs_copy=f"{gbs / copy_gbs:.3f}", vs_torch=f"{torch_ms / ms:.3f}",
                       sm_mhz=f"{w.sm_mhz:.0f}", board_w=f"{w.board_w:.1f}",
                       tflops_per_ghz=f"{energy.per_ghz(tflops, w):.2f}",
                       tflop_per_j=f"{energy.per_joule(tflops, w):.4f}",
                       best_tflops=f"{flop / min(times[(name, recipe)]) / 1e9:.1f}", hold_s=f"{args.hold:g}")
        rows.append(row)
        print(f"  {dtype:4} {name:7} {recipe:7} {row.get('ms', '-'):>9} ms {row.get('tflops', '-'):>7} TFLOP/s "
              f"{row.get('sm_mhz', '-'):>5} MHz {row.get('board_w', '-'):>6} W "
              f"{row.get('tflops_per_ghz', '-'):>7} TF/s/GHz {row.get('tflop_per_j', '-'):>7} TF/J "
              f"{row.get('weight_gbs', '-'):>5} GB/s W  {row.get('vs_torch', '-'):>6}x torch  "
              f"err {row['rel_error']}  {res['plan']}")
    return rows


def run_case(case, dtypes, args, timer, copy_gbs, failures):
    """CSV rows of one case, every dtype asked for."""
    sizes = group_sizes(case[2], case[3], case[4], args.seed)
    offs = torch.tensor(list(itertools.accumulate(sizes)), dtype=torch.int32, device="cuda")
    rows = []
    for dtype in dtypes:
        rows += run_dtype(case, dtype, sizes, offs, args, timer, copy_gbs, failures)
        torch.cuda.empty_cache()
    return rows


# ---- main ----------------------------------------------------------------------

def hold_seconds(text):
    """--hold's seconds: a number above 0 and at most MAX_HOLD_S."""
    try:
        seconds = float(text)
    except ValueError:
        seconds = math.nan
    if not 0 < seconds <= MAX_HOLD_S:
        raise argparse.ArgumentTypeError(f"{text!r}: expected seconds above 0 and at most {MAX_HOLD_S:g}, e.g. 2.5")
    return seconds


def pci_bus_id(device):
    """The PCI bus id of a torch CUDA device as NVML reads it ("00000000:3b:00.0"), or None where this torch
    does not say (energy.Meter then takes the machine's only GPU, if it has one)."""
    props = torch.cuda.get_device_properties(device)
    parts = [getattr(props, f, None) for f in ("pci_domain_id", "pci_bus_id", "pci_device_id")]
    return None if None in parts else f"{parts[0]:08x}:{parts[1]:02x}:{parts[2]:02x}.0"


def bench_parser(doc, reps, warmup, rounds):
    """The argument parser of a bench script whose docstring is `doc`, with the flags they all take:
    --csv (the results, columns documented in its header), --reps (timed runs a round), --warmup
    and --rounds (rounds a provider, the order alternating), with these defaults."""
    ap = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--csv", help="write the results here (columns documented in its header)")
    ap.add_argument("--reps", type=int, default=reps, help=f"timed runs per round (default {reps}; >= 20 advised)")
    ap.add_argument("--warmup", type=int, default=warmup)
    ap.add_argument("--rounds", type=int, default=rounds, help="rounds per provider, the order alternating")
    return ap


def bench_timer(args):
    """The current CUDA device's Timer for a bench_parser's args (warm-up and reps) and its
    description line (device_meter's), which is printed first."""
    info, meter, device = device_meter(torch.cuda.current_device())
    print(device)
    return Timer(info.sm_clock_khz, args.warmup, args.reps, meter), device


def device_meter(dev):
    """tessera's device_info of CUDA device `dev`, its energy.Meter (saying so where NVML is missing), and the
    CSVs' device line: name, SM clock, SMs, power limit, library and torch versions."""
    with tessera.Handle(dev) as h:
        info = h.device_info()
    meter = energy.Meter(pci_bus_id(dev))
    if not meter.available:
        print(f"energy: {meter.why}: the MHz, W, per-GHz and per-J columns are nan")
    line = (f"device={info.name} sm_clock_mhz={info.sm_clock_khz // 1000} sms={info.sm_count} "
            f"power_limit_w={meter.power_limit_w():.0f} library={tessera.version_string()} torch={torch.__version__}")
    return info, meter, line


def write_csv(path, device, rows, columns=COLUMNS, column_doc=COLUMN_DOC):
    """The results so far, with the device line and the column documentation as '#' comments."""
    if not path:
        return
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w", newline="") as f:
        f.write(f"# {device}\n{column_doc}")
        writer = csv.DictWriter(f, columns, restval="")
        writer.writeheader()
        writer.writerows(rows)


def main():
    ap = bench_parser(__doc__, reps=30, warmup=5, rounds=2)
    ap.add_argument("--suite", default=os.path.join(HERE, "suites", "moe.txt"))
    ap.add_argument("--filter", help="only cases whose line 'N K G tokens split' or label contains this")
    ap.add_argument("--dtype", choices=["bf16", "fp8", "all"], default="all")
    ap.add_argument("--hold", type=hold_seconds, default=0.0, metavar="SECONDS",
                    help=f"measure at the power cap: each provider {HOLD_WARM_S:g} s untimed, then SECONDS (at most "
                    f"{MAX_HOLD_S:g}) back to back, {HOLD_ROUNDS} rounds; rows give round 2 (--rounds, --warmup "
                    "and --reps then do not apply)")
    ap.add_argument("--order", help="force tessera's plan: a tile order (nfast, mfast, band: the first plan with "
                    "it) or a piece of a plan's name (e.g. 128x128x64_s6_band; a trailing $ anchors it at the end)")
    ap.add_argument("--check-groups", type=int, default=16, help="groups checked against the reference per case")
    ap.add_argument("--mem-budget-gb", type=float, default=60.0, help="skip cases needing more device memory")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--quick", action="store_true", help=f"only {len(QUICK)} cases (a smoke run): {QUICK}")
    args = ap.parse_args()

    if not torch.cuda.is_available():
        sys.exit("no CUDA device: this benchmark runs on a GPU")
    missing = [f for f in ("_grouped_mm", "_scaled_grouped_mm") if not hasattr(torch, f)]
    if missing:
        sys.exit(f"torch {torch.__version__} lacks torch.{' and torch.'.join(missing)} (2.8 or later has them)")
    cases = read_suite(args.suite)
    if args.quick:
        cases = [c for c in cases if " ".join(map(str, c)) in QUICK] or \
            [tuple(int(v) if v.isdigit() else v for v in line.split()) for line in QUICK]
    if args.filter:
        cases = [c for c in cases if args.filter in " ".join(map(str, c)) or args.filter in case_label(c)]
    dtypes = ["bf16", "fp8"] if args.dtype == "all" else [args.dtype]

    with tessera.Handle(torch.cuda.current_device()) as h:
        info = h.device_info()
    read_write, one_way = copy_rate()
    meter = energy.Meter(pci_bus_id(torch.cuda.current_device()))
    if not meter.available:
        print(f"energy: {meter.why}: the MHz, W, per-GHz and per-J columns are nan")
    device = (f"device={info.name} sm_clock_mhz={info.sm_clock_khz // 1000} mem_clock_mhz={info.mem_clock_khz // 1000}"
              f" sms={info.sm_count} power_limit_w={meter.power_limit_w():.0f} library={tessera.version_string()}"
              f" torch={torch.__version__} copy_gbs={read_write:.1f}")
    print(device)
    print(f"device-to-device copy (1 GiB, median of 20): {read_write:.1f} GB/s counting read + write "
          f"(used below), {one_way:.1f} GB/s one way")
    timer = Timer(info.sm_clock_khz, args.warmup, args.reps, meter)
    if args.hold:
        print(f"hold: per case and provider, {HOLD_WARM_S:g} s back to back untimed, then {args.hold:g} s timed, "
              f"{HOLD_ROUNDS} rounds (the second in reverse order); rows give round 2 and the best round's TF/s")
    rows, failures = [], []
    for case in cases:
        print(f"== {case_label(case)}: sizes {group_sizes(case[2], case[3], case[4], args.seed)[:16]}"
              + (" ..." if case[2] > 16 else ""))
        try:
            rows += run_case(case, dtypes, args, timer, read_write, failures)
            torch.cuda.synchronize()
        except Exception as e:  # a fault the CUDA context does not survive (e.g. an illegal instruction)
            failures.append(f"{case_label(case)}: {type(e).__name__}: {str(e).splitlines()[0]} (run stopped here; "
                            f"rerun with --filter to isolate it)")
            print(f"  FATAL {failures[-1]}")
            break
        finally:
            write_csv(args.csv, device, rows)  # after every case, so that a fault keeps what was measured

    # summary: tessera's ratio to torch per dtype and recipe, geometric means
    print(f"\n{'case':34} {'dtype':5} {'recipe':8} {'TFLOP/s':>8} {'TF/J':>7} {'W GB/s':>7} {'%copy':>6} "
          f"{'vs torch':>8}  plan")
    ratios = {}
    for r in rows:
        if r["provider"] != "tessera" or not r.get("ms"):
            continue
        case = (r["n"], r["k"], r["groups"], r["tokens_per_group"], r["split"])
        print(f"{case_label(case):34} {r['dtype']:5} {r['recipe']:8} {r['tflops']:>8} {r['tflop_per_j']:>7} "
              f"{r['weight_gbs']:>7} "
              f"{100 * float(r['weight_vs_copy']):>5.1f}% {r['vs_torch']:>8}  {r['plan']}")
        if r["vs_torch"] not in ("", "nan"):
            ratios.setdefault((r["dtype"], r["recipe"]), []).append(float(r["vs_torch"]))
    for (dtype, recipe), rs in ratios.items():
        geo = math.exp(sum(map(math.log, rs)) / len(rs))
        print(f"geomean tessera/torch {dtype} {recipe}: {geo:.3f}x over {len(rs)} cases (min {min(rs):.3f}x)")
    if args.csv:
        print(f"wrote {args.csv}")
    if failures:
        print("\nFAILURES:\n  " + "\n  ".join(failures))
        sys.exit(1)


if __name__ == "__main__":
    main()
