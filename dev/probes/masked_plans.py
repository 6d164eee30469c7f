#!/usr/bin/env python3
"""Every tessera plan of masked FP8 MoE problems over many draws of the group sizes, beside DeepGEMM.

A masked problem's rows per group are known only on the device; the planner sees expected_m. With
rows drawn as fp8.py draws them (expected_m x U(0.7, 1.3) per group), a plan that is best at
exactly expected_m can lose a whole wave on half the draws. For each shape (G, expected_m, N, K)
this times DeepGEMM, tessera's heuristic pick and each of tessera's plans on `--draws` draws (the
same buffers, only masked_m changes; L2 flushed before each call, calls interleaved: fp8.py's
Timer) and prints per plan the mean time over the draws and the geometric mean of DeepGEMM's time
over the plan's. Each plan's output is checked against DeepGEMM's on the first draw.

    python3 dev/probes/masked_plans.py --peers .peers --csv OUT/masked-plans.csv \
        --shape 1x1024x7168x2048 --shape 1x1024x4096x7168
"""
import argparse
import csv
import math
import os
import random
import statistics
import sys


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--peers", default=".peers")
    ap.add_argument("--shape", action="append", required=True, help="GxExpectedMxNxK")
    ap.add_argument("--draws", type=int, default=8)
    ap.add_argument("--limit", type=int, default=16, help="plans per shape")
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--csv")
    args = ap.parse_args()
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from fp8_every_plan import load_peers  # noqa: E402
    fp8, dg, ts = load_peers(args.peers, "masked_plans")
    import torch
    timer = fp8.Timer(args.reps, 2, 256, 1_980_000)
    dev, bf16 = "cuda", torch.bfloat16
    rows_out = []
    print(f"device={torch.cuda.get_device_name()} tessera_commit={fp8.tessera_commit()} draws={args.draws}")
    for shape in args.shape:
        g, e, n, k = (int(v) for v in shape.split("x"))
        torch.manual_seed(g * 7 + e * 13 + n * 17 + k)
        rng = random.Random(g * 7919 + e * 31 + n + k)
        max_m = fp8.align(int(e * 1.3) + 1, 128)
        w = torch.empty((g, n, k), device=dev, dtype=torch.float8_e4m3fn)
        sfb = torch.empty((g, fp8.ceil_div(n, 128), k // 128), device=dev, dtype=torch.float32)
        for i in range(g):
            w[i], sfb[i] = fp8.per_block_cast(torch.randn((n, k), device=dev, dtype=bf16))
        qx, sx = fp8.per_token_cast(torch.randn((g * max_m, k), device=dev, dtype=bf16))
        x, sfa = qx.view(g, max_m, k), fp8.mn_major(sx.view(g, max_m, k // 128))
        masked_m = torch.full((g,), e, device=dev, dtype=torch.int32)
        outs = {"deepgemm": torch.empty((g, max_m, n), device=dev, dtype=bf16)}
        calls = {"deepgemm": lambda: dg.m_grouped_fp8_gemm_nt_masked((x, sfa), (w, sfb), outs["deepgemm"],
                                                                     masked_m, e)}

        def tessera_call(name, plan):
            y = outs.setdefault(name, torch.empty((g, max_m, n), device=dev, dtype=bf16))
            return lambda: ts.grouped_mm_masked(x, w, masked_m, e, y, scale_x=sfa, scale_w=sfb, scale_recipe_x="1x128",
                                                scale_recipe_w="128x128", plan=plan)
        calls["tessera (pick)"] = tessera_call("tessera (pick)", None)
        plans = ts.grouped_plans(x, w, scale_x=sfa, scale_w=sfb, expected_m=e, scale_recipe_x="1x128",
                                 scale_recipe_w="128x128", limit=args.limit)
        for rank, plan in enumerate(plans):
            name = f"{rank:02d} {plan.name}"
            calls[name] = tessera_call(name, plan)
        times = {name: [] for name in calls}
        for d in range(args.draws):
            # Draw d: rows spread evenly over [0.7, 1.3) x e across the draws, groups shuffled apart.
            sizes = [max(1, int(e * (0.7 + 0.6 * ((d + rng.random()) / args.draws)))) for _ in range(g)]
            masked_m.copy_(torch.tensor(sizes, dtype=torch.int32))
            if d == 0:
                for name, fn in list(calls.items()):
                    fn()
                torch.cuda.synchronize()
                ref = torch.cat([outs["deepgemm"][i, :r] for i, r in enumerate(sizes)]).float()
                for name in list(calls):
                    if name == "deepgemm":
                        continue
                    got = torch.cat([outs[name][i, :r] for i, r in enumerate(sizes)]).float()
                    err = fp8.rel_err(got, ref.double())
                    if not err <= 1e-2:
                        print(f"  {name}: WRONG ({err:.2e}); not timed")
                        del calls[name]
            for name, ts_ms in timer.run(calls).items():
                times[name].append(statistics.median(ts_ms))
        dg_ms = times["deepgemm"]
        print(f"== masked G={g} expected {e} n={n} k={k} (max_m {max_m}): DeepGEMM mean {statistics.mean(dg_ms) * 1e3:.1f} us")
        ranked = sorted((name for name in calls), key=lambda nm: statistics.mean(times[nm]))
        for name in ranked:
            ratio = math.exp(statistics.mean(math.log(a / b) for a, b in zip(dg_ms, times[name])))
            worst = min(a / b for a, b in zip(dg_ms, times[name]))
            print(f"  {statistics.mean(times[name]) * 1e3:8.1f} us  {ratio:6.3f}x (min {worst:5.3f})  {name}")
            rows_out.append({"shape": shape, "who": name, "mean_us": f"{statistics.mean(times[name]) * 1e3:.2f}",
                             "dg_over_geomean": f"{ratio:.4f}", "dg_over_min": f"{worst:.4f}",
                             "us_per_draw": " ".join(f"{t * 1e3:.1f}" for t in times[name])})
        del x, w, sfa, sfb, outs, calls
        torch.cuda.empty_cache()
    if args.csv:
        with open(args.csv, "w", newline="") as f:
            f.write(f"# device={torch.cuda.get_device_name()} tessera_commit={fp8.tessera_commit()} draws={args.draws} "
                    f"reps={args.reps} flush_mb=256; dg_over = deepgemm_us / us (> 1: faster than DeepGEMM)\n")
            wr = csv.DictWriter(f, fieldnames=["shape", "who", "mean_us", "dg_over_geomean", "dg_over_min", "us_per_draw"])
            wr.writeheader()
            wr.writerows(rows_out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
