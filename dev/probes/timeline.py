#!/usr/bin/env python3
"""Per-CTA timeline of one sm90 GEMM: where a tile's time goes (needs dev/ab/timeline.patch).

With the patch applied and TESS_TIMELINE set, each consumer warpgroup's thread 0 writes globaltimer
stamps into the handle's workspace (data-parallel plans only): its entry and exit, and per tile
(up to 16) the tile's start, its first full stage, the mainloop's end and the epilogue's end.
This runs an FP8 block-scaled GEMM (1x128 x 128x128 factors, bf16 D), dense or masked grouped, a
few times, reads the last run's stamps and prints medians over the warpgroups, in microseconds:

  first stage   tile start -> its first stage full (the ring ran dry)
  mainloop      first stage -> last wgmma done (per K block as well)
  epilogue      mainloop end -> epilogue end
  between       epilogue end -> next tile's start
  head, tail    kernel's first entry -> first tile start; last epilogue -> exit

    git apply dev/ab/timeline.patch && make
    PYTHONPATH=python TESSERA_LIBRARY=build/lib/libtessera.so python3 dev/probes/timeline.py \
        --m 4096 --n 7168 --k 2048 [--masked 1,1024] [--plan NAME]
"""
import argparse
import os
import statistics

import torch

import tessera

SLOTS = 68  # u64 a warpgroup: [cta, tiles, entry, exit] + 16 tiles x [start, first full, mainloop end, epilogue end]


def pick_plan(plans, name):
    """The plan called `name` (None: the heuristic's); exits listing the plans where none is."""
    if name is None:
        return None
    for p in plans:
        if p.name == name:
            return p
    raise SystemExit(f"no plan {name}; the problem's plans: " + ", ".join(p.name for p in plans))


def median(xs):
    return statistics.median(xs) if xs else float("nan")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--m", type=int, default=4096)
    ap.add_argument("--n", type=int, default=7168)
    ap.add_argument("--k", type=int, default=2048)
    ap.add_argument("--masked", help="G,E: masked grouped, G groups of E rows (m is ignored)")
    ap.add_argument("--plan", help="a plan name (gemm_plans / grouped_plans); the heuristic's otherwise")
    args = ap.parse_args()
    os.environ["TESS_TIMELINE"] = "1"
    n, k = args.n, args.k
    dev = torch.device("cuda")
    h = tessera.Handle(0)
    h.stream = torch.cuda.current_stream()
    ws = torch.zeros(64 << 20, dtype=torch.uint8, device=dev)
    h.set_workspace(ws.data_ptr(), ws.numel())
    kb = k // 128
    w = torch.randn(n, k, device=dev).to(torch.float8_e4m3fn)
    sfb = torch.rand((n + 127) // 128, kb, device=dev) + 0.5
    if args.masked:
        g, e = (int(v) for v in args.masked.split(","))
        x = torch.randn(g, e, k, device=dev).to(torch.float8_e4m3fn)
        sfx = (torch.rand(g, kb, (e + 3) // 4 * 4, device=dev) + 0.5).transpose(1, 2)[:, :e]
        wg = w.unsqueeze(0).expand(g, n, k).contiguous()
        sfw = sfb.unsqueeze(0).expand(g, *sfb.shape).contiguous()
        masked_m = torch.full((g,), e, dtype=torch.int32, device=dev)
        y = torch.empty(g, e, n, device=dev, dtype=torch.bfloat16)
        plans = tessera.grouped_plans(x, wg, scale_x=sfx, scale_w=sfw, expected_m=e, scale_recipe_x="1x128",
                                      scale_recipe_w="128x128", handle=h)
        plan = pick_plan(plans, args.plan)
        call = lambda: tessera.grouped_mm_masked(x, wg, masked_m, e, y, scale_x=sfx, scale_w=sfw, handle=h,
                                                 scale_recipe_x="1x128", scale_recipe_w="128x128", plan=plan)
        what = f"masked {g} x {e}, N {n}, K {k}"
    else:
        m = args.m
        a = torch.randn(m, k, device=dev).to(torch.float8_e4m3fn)
        sfa = (torch.rand(kb, (m + 3) // 4 * 4, device=dev) + 0.5).T[:m]
        y = torch.empty(m, n, device=dev, dtype=torch.bfloat16)
        plans = tessera.gemm_plans(a, w.T, y, scale_a=sfa, scale_b=sfb, scale_recipe_a="1x128",
                                   scale_recipe_b="128x128", handle=h)
        plan = pick_plan(plans, args.plan)
        call = lambda: tessera.gemm(a, w.T, y, scale_a=sfa, scale_b=sfb, scale_recipe_a="1x128",
                                    scale_recipe_b="128x128", handle=h, plan=plan)
        what = f"dense {m}x{n}x{k}"
    for _ in range(5):
        ws.zero_()
        call()
    torch.cuda.synchronize()
    stamps = ws.view(torch.int64)[: 264 * SLOTS].view(264, SLOTS).cpu().tolist()
    rows = [r for r in stamps if r[1] > 0]
    if not rows:
        raise SystemExit("no stamps: is dev/ab/timeline.patch applied, and the plan data-parallel?")
    t0 = min(r[2] for r in rows)
    parts = {"first stage": [], "mainloop": [], "mainloop per K block": [], "epilogue": [], "between": [],
             "head": [], "tail": []}
    spans = []
    for r in rows:
        tiles = [r[4 + 4 * j: 8 + 4 * j] for j in range(min(r[1], 16))]
        parts["head"].append((tiles[0][0] - t0) / 1e3)
        parts["tail"].append((r[3] - tiles[-1][3]) / 1e3)
        spans.append((r[3] - t0) / 1e3)
        for j, (start, full, done, end) in enumerate(tiles):
            parts["first stage"].append((full - start) / 1e3)
            parts["mainloop"].append((done - full) / 1e3)
            parts["mainloop per K block"].append((done - full) / 1e3 / max(1, (k + 127) // 128))
            parts["epilogue"].append((end - done) / 1e3)
            if j + 1 < len(tiles):
                parts["between"].append((tiles[j + 1][0] - end) / 1e3)
    print(f"{torch.cuda.get_device_name()}: {what}, plan {plan.name if plan else '(heuristic)'}, "
          f"{len(rows)} warpgroups, tiles each {min(r[1] for r in rows)}-{max(r[1] for r in rows)}")
    print(f"  kernel span (first entry -> last exit) {max(spans):.2f} us")
    for name, xs in parts.items():
        if xs:
            print(f"  {name:22} median {median(xs):7.3f} us  (min {min(xs):.3f}, max {max(xs):.3f}, n {len(xs)})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
