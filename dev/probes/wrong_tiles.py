#!/usr/bin/env python3
"""Where a tessera FP8 plan goes wrong: the output tiles that differ from a float reference.

Runs tessera.gemm with block factors (A 1x128, B 128x128) under the plan whose name ends in
SUFFIX, twice, and compares each tile (of the plan's tile shape) with the float32 product of the
dequantized inputs: prints the bad tiles (relative error above --tol), whether the two runs agree
on them, and within a bad tile the ratio got / want (a constant ratio points at a scale factor,
zeros at a store, noise at a race).

    python3 dev/probes/wrong_tiles.py --m 4096 --n 32768 --k 512 --plan 128x32x128_s10_c1x1_blk
"""
import argparse
import sys

import torch

import tessera


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--m", type=int, default=4096)
    ap.add_argument("--n", type=int, default=32768)
    ap.add_argument("--k", type=int, default=512)
    ap.add_argument("--plan", required=True, help="the end of the plan's name")
    ap.add_argument("--tol", type=float, default=0.02)
    ap.add_argument("--show", type=int, default=12, help="bad tiles printed")
    args = ap.parse_args()
    torch.manual_seed(0)
    x = torch.randn(args.m, args.k, device="cuda")
    w = torch.randn(args.n, args.k, device="cuda")
    qa, sa = tessera.quantize_fp8(x, "1x128")
    qw, sw = tessera.quantize_fp8(w, "128x128")
    scales = dict(scale_a=sa, scale_b=sw, scale_recipe_a="1x128", scale_recipe_b="128x128")
    plans = [p for p in tessera.gemm_plans(qa, qw.T, limit=64, **scales) if p.name.endswith(args.plan)]
    if not plans:
        sys.exit(f"no plan ends in {args.plan}")
    plan = plans[0]
    print("plan", plan.name, "tile", plan.tile)
    deq_a = qa.float() * sa.float().repeat_interleave(128, dim=1)[:, :args.k]
    sw_full = sw.float().repeat_interleave(128, dim=0)[:args.n].repeat_interleave(128, dim=1)[:, :args.k]
    want = deq_a @ (qw.float() * sw_full).T
    runs = [tessera.gemm(qa, qw.T, plan=plan, **scales).float() for _ in range(2)]
    torch.cuda.synchronize()
    tm, tn = plan.tile[0], plan.tile[1]
    mt, nt = (args.m + tm - 1) // tm, (args.n + tn - 1) // tn
    pad = lambda t: torch.nn.functional.pad(t, (0, nt * tn - args.n, 0, mt * tm - args.m))
    wt = pad(want).view(mt, tm, nt, tn)
    bad_sets = []
    for r, got in enumerate(runs):
        d = (pad(got) - pad(want)).view(mt, tm, nt, tn)
        err = d.pow(2).sum(dim=(1, 3)).sqrt() / wt.pow(2).sum(dim=(1, 3)).sqrt().clamp_min(1e-30)
        bad = (err > args.tol).nonzero().tolist()
        bad_sets.append({tuple(b) for b in bad})
        total = (got - want).norm() / want.norm()
        print(f"run {r}: relative error {total:.3e}; {len(bad)} of {mt * nt} tiles above {args.tol}")
        for i, j in bad[:args.show]:
            g = pad(got)[i * tm:(i + 1) * tm, j * tn:(j + 1) * tn]
            v = wt[i, :, j, :]
            ratio = (g / v.where(v.abs() > 1e-3, torch.ones_like(v))).flatten()
            zeros = (g == 0).float().mean().item()
            rows_bad = ((g - v).abs().amax(dim=1) > 0.05 * v.abs().amax()).nonzero().flatten().tolist()
            print(f"  tile ({i}, {j}) m0 {i * tm} n0 {j * tn}: error {err[i, j]:.3e}, zeros {zeros:.2f}, "
                  f"ratio median {ratio.median():.4f} (p10 {ratio.quantile(0.1):.3f}, p90 {ratio.quantile(0.9):.3f}), "
                  f"bad rows {len(rows_bad)}: {rows_bad[:8]}")
    print("the runs' bad tiles: same" if bad_sets[0] == bad_sets[1] else
          f"the runs' bad tiles differ ({len(bad_sets[0] & bad_sets[1])} in both)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
