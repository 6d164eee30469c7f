#!/usr/bin/env python3
"""Every tessera plan of some of ../shared/peers fp8.py's cases, timed beside DeepGEMM.

For each case (fp8.py's labels, e.g. "dense m=4096 n=2112 k=7168", "masked G=1 x 1024 n=7168 k=2048"):
the same inputs fp8.py makes, DeepGEMM's call, tessera's heuristic call, and tessera with each of
its plans (gemm_plans / grouped_plans, best estimate first), all timed in one batch by fp8.py's
Timer (L2 flushed before each call, calls interleaved). Each plan's output is checked against
DeepGEMM's (relative Frobenius error of the rows that count); a wrong plan is reported, not timed.
Prints per case the plans sorted by time, with the ratio DeepGEMM / plan; writes a CSV.

    python3 dev/probes/fp8_every_plan.py --peers .peers --csv OUT/plans.csv \
        --case "dense m=4096 n=2112 k=7168" --case "masked G=1 x 1024 n=7168 k=2048"
"""
import argparse
import csv
import os
import statistics
import sys


def parse_case(fp8, label):
    """fp8.Case from a label of fp8.py's form."""
    words = dict(w.split("=") for w in label.split() if "=" in w)
    if label.startswith("dense"):
        return fp8.Case("dense", 1, int(words["m"]), int(words["n"]), int(words["k"]))
    section = label.split()[0]
    g, m = label.split("G=")[1].split(" x ")[0], label.split(" x ")[1].split()[0]
    return fp8.Case(section, int(g), int(m), int(words["n"]), int(words["k"]))


def tessera_plan_calls(fp8, ts, case, inp, limit):
    """{plan name: call} for every plan of the case (the heuristic's first), and the plans' outputs."""
    import torch
    outs, calls = {}, {}
    if case.section == "dense":
        plans = ts.gemm_plans(inp.a, inp.b.T, scale_a=inp.sfa, scale_b=inp.sfb, scale_recipe_a="1x128",
                              scale_recipe_b="128x128", limit=limit)
    else:
        plans = ts.grouped_plans(inp.x, inp.w, scale_x=inp.sfa, scale_w=inp.sfb, expected_m=inp.expected_m,
                                 scale_recipe_x="1x128", scale_recipe_w="128x128", limit=limit)
    for rank, plan in enumerate(plans):
        name = f"{rank:02d} {plan.name}"
        y = torch.empty_like(inp.out["tessera"])
        if case.section == "dense":
            fn = (lambda y=y, plan=plan: ts.gemm(inp.a, inp.b.T, y, scale_a=inp.sfa, scale_b=inp.sfb,
                                                 scale_recipe_a="1x128", scale_recipe_b="128x128", plan=plan))
        elif case.section == "contiguous":
            fn = (lambda y=y, plan=plan: ts.grouped_mm(inp.x, inp.w, inp.offs, y, scale_x=inp.sfa, scale_w=inp.sfb,
                                                       expected_m=inp.expected_m, scale_recipe_x="1x128",
                                                       scale_recipe_w="128x128", plan=plan))
        else:
            fn = (lambda y=y, plan=plan: ts.grouped_mm_masked(inp.x, inp.w, inp.masked_m, inp.expected_m, y,
                                                              scale_x=inp.sfa, scale_w=inp.sfb, scale_recipe_x="1x128",
                                                              scale_recipe_w="128x128", plan=plan))
        calls[name], outs[name] = fn, y
    return calls, outs


def rows_that_count(case, inp, y):
    """The output rows a case computes (masked: each group's masked_m rows), stacked."""
    import torch
    if case.section != "masked":
        return y.float()
    return torch.cat([y[g, :r] for g, r in enumerate(inp.sizes)]).float()


def load_peers(peers, who):
    """The peers' harness fp8.py (cases, inputs, timer) from folder `peers`, DeepGEMM and tessera;
    exits naming `who` where either does not import."""
    sys.path.insert(0, os.path.abspath(peers))
    import fp8  # noqa: E402
    libs, why = fp8.import_libs(argparse.Namespace(no_torch=True, no_deepgemm=False, no_tessera=False))
    dg, ts = libs.get("deepgemm"), libs.get("tessera")
    if dg is None or ts is None:
        sys.exit(f"{who}: need DeepGEMM and tessera: {why}")
    return fp8, dg, ts


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--peers", default=".peers", help="the peers folder (a copy of ../shared/peers)")
    ap.add_argument("--case", action="append", required=True, help="an fp8.py case label (repeatable)")
    ap.add_argument("--limit", type=int, default=24, help="plans per case")
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--csv")
    args = ap.parse_args()
    fp8, dg, ts = load_peers(args.peers, "fp8_every_plan")
    import torch
    opts = argparse.Namespace(seed=0, ragged=False, masked_exact=False)
    timer = fp8.Timer(args.reps, args.warmup, 256, 1_980_000)
    rows = []
    print(f"device={torch.cuda.get_device_name()} tessera_commit={fp8.tessera_commit()}")
    for label in args.case:
        case = parse_case(fp8, label)
        inp = fp8.make_inputs(case, opts)
        calls = fp8.make_calls(case, inp, {"deepgemm": dg, "tessera": ts}, {})
        calls["deepgemm"]()
        torch.cuda.synchronize()
        ref = rows_that_count(case, inp, inp.out["deepgemm"])
        plan_calls, plan_outs = tessera_plan_calls(fp8, ts, case, inp, args.limit)
        for name in list(plan_calls):
            try:
                plan_calls[name]()
                torch.cuda.synchronize()
                err = fp8.rel_err(rows_that_count(case, inp, plan_outs[name]), ref)
            except Exception as e:
                err = float("inf")
                print(f"  {name}: FAILED {fp8.short(e)}")
            if not err <= 1e-2:
                print(f"  {name}: WRONG (error against DeepGEMM {err:.2e}); not timed")
                del plan_calls[name]
        calls.update(plan_calls)
        times = {k: statistics.median(v) for k, v in timer.run(calls).items()}
        dg_ms = times["deepgemm"]
        print(f"== {label}: DeepGEMM {dg_ms * 1e3:.1f} us, {inp.flop / dg_ms / 1e9:.0f} TF/s")
        for name, ms in sorted(times.items(), key=lambda kv: kv[1]):
            print(f"  {ms * 1e3:8.1f} us  {dg_ms / ms:6.3f}x  {name}")
            rows.append({"case": label, "who": name, "us": f"{ms * 1e3:.2f}",
                         "tflops": f"{inp.flop / ms / 1e9:.1f}", "dg_over": f"{dg_ms / ms:.4f}"})
        del inp, calls, plan_calls, plan_outs
        torch.cuda.empty_cache()
    if args.csv:
        with open(args.csv, "w", newline="") as f:
            f.write(f"# device={torch.cuda.get_device_name()} tessera_commit={fp8.tessera_commit()} "
                    f"reps={args.reps} flush_mb=256; dg_over = deepgemm_us / us (> 1: faster than DeepGEMM)\n")
            w = csv.DictWriter(f, fieldnames=["case", "who", "us", "tflops", "dg_over"])
            w.writeheader()
            w.writerows(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
